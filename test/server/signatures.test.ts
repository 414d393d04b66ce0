/**
 * Events signed by their agent, over HTTP (docs/signatures.md): agents' keys registered and
 * revoked as events of the log, every refusal at ingest on its own and beside valid elements of a
 * batch, and the key rotation of issue 31 verified in the store and offline from a package.
 */
import {expect} from 'chai'
import * as jose from 'jose'
import {generateSigningJwk, publicJwkOf, type PrivateSigningJwk, type SigningJwk} from '../../src/core/crypto.js'
import {verifyPackage} from '../../src/core/evidence/verify.js'
import {jwkThumbprint} from '../../src/core/jws/jwk.js'
import {signingInputOf} from '../../src/core/signature/index.js'
import {signEvent} from '../../src/index.js'
import {useTestApi} from '../support/harness.js'
import {forEachStore} from '../support/stores.js'

interface AgentKey {
  key: PrivateSigningJwk
  jwk: SigningJwk
  kid: string
}

function newKey(curve: 'Ed25519' | 'P-256' = 'Ed25519'): AgentKey {
  const key = generateSigningJwk(curve)
  const jwk = publicJwkOf(key)
  return {key, jwk, kid: jwkThumbprint(jwk)}
}

const action = (agent_id: string, name = 'crm.lookup') => ({
  agent_id,
  action_type: 'TOOL_CALL',
  action_name: name,
  input: {customer: 42},
})

describe('events signed by their agent, over HTTP', () =>
  forEachStore((store) => {
    const api = useTestApi({store, app: {otlp: true}})

    const put = (agent: string, k: AgentKey, body: unknown = k.jwk) =>
      api.request('PUT', `/v1/agents/${encodeURIComponent(agent)}/keys/${k.kid}`, {body})
    const del = (agent: string, k: AgentKey) => api.request('DELETE', `/v1/agents/${agent}/keys/${k.kid}`)
    const post = (body: unknown) => api.request('POST', '/v1/events', {body})
    const count = () => api.services.store.count()

    describe('agent keys', () => {
      it('PUT registers a key as a KEY_REGISTERED event of audit-trail:keys; again, answers that event', async () => {
        const k = newKey()
        const first = await put('billing/bot', k)
        expect(first.status, first.text).to.equal(201)
        expect(first.body.key).to.deep.include({
          agent_id: 'billing/bot',
          kid: k.kid,
          jwk: k.jwk,
          registered_index: 0,
          revoked_index: null,
          revocation_event_id: null,
        })
        expect(first.body.event).to.deep.include({
          agent_id: 'audit-trail:keys',
          action_type: 'KEY_REGISTERED',
          metadata: {agent_id: 'billing/bot', kid: k.kid, jwk: k.jwk},
          index: 0,
        })
        const again = await put('billing/bot', k, {...k.jwk, kid: k.kid, use: 'sig'})
        expect(again.status).to.equal(200)
        expect(again.body.event.id).to.equal(first.body.event.id)
        expect(await count()).to.equal(1)
        const list = await api.request('GET', '/v1/agents/billing%2Fbot/keys')
        expect(list.body).to.deep.equal([first.body.key])
        expect((await api.request('GET', '/v1/agents/nobody/keys')).body).to.deep.equal([])
      })

      it('refuses a key that is not what the path names, and records nothing', async () => {
        const k = newKey()
        const other = newKey()
        const cases: Array<[Promise<{status: number; body: any}>, number, RegExp]> = [
          [put('bot', {...k, kid: other.kid}), 400, new RegExp(`thumbprint ${k.kid}`)],
          [put('bot', k, k.key), 400, /private key/],
          [put('bot', k, {kty: 'OKP', crv: 'Ed25519', x: 'AAAA'}), 400, /32 bytes/],
          [put('bot', k, {...k.jwk, kid: other.kid}), 400, /body.kid|thumbprint/],
          [put('audit-trail:keys', k), 400, /must not begin with audit-trail:/],
          [api.request('PUT', `/v1/agents/bot/keys/not-a-kid`, {body: k.jwk}), 400, /43 base64url/],
          [del('bot', k), 404, new RegExp(`agent bot has no key ${k.kid}`)],
        ]
        for (const [answer, status, message] of cases) {
          const {status: got, body} = await answer
          expect(got, JSON.stringify(body)).to.equal(status)
          expect(body.error.message + JSON.stringify(body.error.details ?? [])).to.match(message)
        }
        expect(await count()).to.equal(0)
      })

      it("a kid belongs to one agent for good: another agent's, or once revoked, it is a conflict", async () => {
        const k = newKey()
        await put('bot', k)
        expect((await put('other', k)).status).to.equal(409)
        const revoked = await del('bot', k)
        expect(revoked.status).to.equal(200)
        expect(revoked.body.key).to.include({registered_index: 0, revoked_index: 1})
        expect(revoked.body.event).to.deep.include({
          action_type: 'KEY_REVOKED',
          metadata: {agent_id: 'bot', kid: k.kid, jwk: k.jwk},
        })
        const again = await del('bot', k)
        expect(again.status).to.equal(200)
        expect(again.body.event.id).to.equal(revoked.body.event.id)
        const reregistered = await put('bot', k)
        expect(reregistered.status).to.equal(409)
        expect(reregistered.body.error.message).to.match(/revoked at index 1/)
        expect(await count()).to.equal(2)
        expect((await api.request('GET', '/v1/agents/bot/keys')).body[0]).to.include({revoked_index: 1})
      })
    })

    describe('ingest refuses what has no valid signature (400 invalid_signature), records nothing', () => {
      let bot: AgentKey
      let revoked: AgentKey
      let stranger: AgentKey
      beforeEach(async () => {
        bot = newKey()
        revoked = newKey()
        stranger = newKey('P-256')
        await put('bot', revoked)
        await del('bot', revoked)
        await put('bot', bot)
        await put('stranger', stranger)
      })

      const refusals: Array<[string, () => Record<string, unknown>, RegExp]> = [
        ['an unsigned event of an agent with a key', () => action('bot'), /^missing signature: agent bot has a key/],
        [
          'a signed event of an agent with no key',
          () => signEvent(action('newcomer'), bot.key),
          /^no key: agent newcomer/,
        ],
        [
          "another agent's key",
          () => signEvent(action('bot'), stranger.key),
          /^unknown key: .* \(it is a key of agent stranger\)/,
        ],
        ['a key the log does not know', () => signEvent(action('bot'), newKey().key), /^unknown key: /],
        ['a revoked key', () => signEvent(action('bot'), revoked.key), /^revoked key: .* revoked at index 1/],
        [
          'a bad signature',
          () => {
            const signed = signEvent(action('bot'), bot.key)
            const [header, signature] = (signed.signature as string).split('..') as [string, string]
            const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11)
            return {...signed, signature: `${header}..${flipped}`}
          },
          /^bad signature: /,
        ],
        [
          'a signature over other content',
          () => ({...signEvent(action('bot'), bot.key), action_name: 'crm.delete'}),
          /^bad signature: .*over other content/,
        ],
      ]

      for (const [what, body, message] of refusals) {
        it(`${what}: alone`, async () => {
          const before = await count()
          const res = await post(body())
          expect(res.status, res.text).to.equal(400)
          expect(res.body.error.code).to.equal('invalid_signature')
          expect(res.body.error.message).to.match(message)
          expect(res.body.error.details).to.deep.equal([{field: 'signature', message: res.body.error.message}])
          expect(await count()).to.equal(before)
        })

        it(`${what}: in a batch, beside valid elements that are recorded in order`, async () => {
          const before = await count()
          const valid1 = signEvent(action('bot', 'first'), bot.key)
          const valid2 = action('unkeyed', 'second')
          const res = await api.request('POST', '/v1/batch', {body: [valid1, body(), valid2]})
          expect(res.status, res.text).to.equal(207)
          expect(res.body.map((r: {status: number}) => r.status)).to.deep.equal([201, 400, 201])
          expect(res.body[1].error.code).to.equal('invalid_signature')
          expect(res.body[1].error.message).to.match(message)
          expect([res.body[0].event.index, res.body[2].event.index]).to.deep.equal([before, before + 1])
          expect(await count()).to.equal(before + 2)
        })
      }

      it('a signed event needs its id, its time and the salts of its payload: 400 validation_error', async () => {
        const {id: _id, ...noId} = signEvent(action('bot'), bot.key)
        const {salts: _salts, ...noSalts} = signEvent(action('bot'), bot.key)
        for (const [body, field] of [
          [noId, 'id'],
          [noSalts, 'salts'],
        ] as const) {
          const res = await post(body)
          expect(res.status).to.equal(400)
          expect(res.body.error).to.include({code: 'validation_error'})
          expect(res.body.error.details[0].field).to.equal(field)
        }
      })

      it('a retry of a signed event recorded before its key was revoked is answered 200 from the log', async () => {
        const signed = signEvent(action('bot'), bot.key)
        const first = await post(signed)
        expect(first.status).to.equal(201)
        await del('bot', bot)
        const retry = await post(signed)
        expect(retry.status).to.equal(200)
        expect(retry.body.id).to.equal(first.body.id)
      })

      it('OTLP spans of an agent with a key are refused (partial success), nothing recorded', async () => {
        const before = await count()
        const span = {
          traceId: '5b8efff798038103d269b633813fc60c',
          spanId: 'eee19b7ec3c1b174',
          name: 'lookup',
          startTimeUnixNano: '1763715600000000000',
          endTimeUnixNano: '1763715601000000000',
        }
        const resource = {attributes: [{key: 'service.name', value: {stringValue: 'bot'}}]}
        const res = await api.request('POST', '/v1/traces', {
          body: {resourceSpans: [{resource, scopeSpans: [{spans: [span]}]}]},
        })
        expect(res.status).to.equal(200)
        expect(res.body.partialSuccess.rejectedSpans).to.equal('1')
        expect(res.body.partialSuccess.errorMessage).to.match(/missing signature/)
        expect(await count()).to.equal(before)
      })
    })

    it('accepts a signature jose made over the signing input', async () => {
      const k = newKey()
      await put('bot', k)
      const {signature: _ours, ...body} = signEvent(action('bot'), k.key)
      const {validateEvent} = await import('../../src/core/event/index.js')
      const input = signingInputOf(validateEvent(body, {now: new Date(), generateId: () => 'unused'}).event)
      const compact = await new jose.CompactSign(Buffer.from(input))
        .setProtectedHeader({alg: 'EdDSA', kid: k.kid})
        .sign(await jose.importJWK(k.key, 'EdDSA'))
      const [header, , signature] = compact.split('.')
      const res = await post({...body, signature: `${header}..${signature}`})
      expect(res.status, res.text).to.equal(201)
    })

    it('rotation: every event verifies, also offline; the old key after its revocation is refused', async () => {
      const k1 = newKey()
      const k2 = newKey('P-256')
      await post(action('bot', 'unsigned, before any key'))
      await put('bot', k1)
      expect((await post(signEvent(action('bot', 'with k1'), k1.key))).status).to.equal(201)
      await put('bot', k2)
      await del('bot', k1)
      expect((await post(signEvent(action('bot', 'with k2'), k2.key))).status).to.equal(201)
      const late = await post(signEvent(action('bot', 'with k1, too late'), k1.key))
      expect(late.status).to.equal(400)
      expect(late.body.error.message).to.match(/^revoked key/)

      const verify = await api.request('GET', '/v1/verify?agent_id=bot')
      expect(verify.body).to.include({valid: true, events_checked: 3})
      expect((await api.request('GET', '/v1/verify')).body.valid).to.equal(true)
      const agents = (await api.request('GET', '/v1/agents')).body as Array<{agent_id: string; chain_valid: boolean}>
      expect(agents.every((agent) => agent.chain_valid)).to.equal(true)

      const pkg = JSON.parse((await api.request('GET', '/v1/export')).text)
      expect(pkg.version).to.equal(2)
      expect(pkg.keys.map((entry: any) => entry.event.action_type)).to.deep.equal([
        'KEY_REGISTERED',
        'KEY_REGISTERED',
        'KEY_REVOKED',
      ])
      const offline = await verifyPackage(pkg)
      expect(offline).to.include({valid: true, signatures_checked: 2})
      const byAgent = JSON.parse((await api.request('GET', '/v1/export?agent_id=bot')).text)
      expect(await verifyPackage(byAgent)).to.include({valid: true, events_checked: 3, signatures_checked: 2})

      const {keys: _keys, ...withoutKeys} = byAgent
      const failed = await verifyPackage(withoutKeys)
      expect(failed.failure).to.include({check: 'signature', reason: 'bad_signature'})
      // A revocation left out of keys, while the unfiltered package holds it among its events.
      const notRevoked = pkg.keys.filter((entry: any) => entry.event.action_type !== 'KEY_REVOKED')
      const left = await verifyPackage({...pkg, keys: notRevoked})
      expect(left.failure).to.include({check: 'keys'})
      expect(left.failure!.message).to.match(/is missing from keys/)
      // A key event whose proof does not lead to the root.
      const [first, ...rest] = byAgent.keys
      const path = [...first.proof.audit_path]
      path[0] = path[0].replace(/^./, (c: string) => (c === '0' ? '1' : '0'))
      const unproven = await verifyPackage({
        ...byAgent,
        keys: [{...first, proof: {...first.proof, audit_path: path}}, ...rest],
      })
      expect(unproven.failure).to.include({check: 'keys'})
      expect(unproven.failure!.message).to.match(/inclusion proof of keys\[0\] .* does not lead to the package root/)

      const policy = await api.request('POST', '/v1/policy/check', {
        body: {policies: [{name: 'signed', type: 'signed_events', agent_id: 'bot'}]},
      })
      expect(policy.body.results[0]).to.include({passed: false, violation_count: 1})
      expect(policy.body.results[0].violations[0].message).to.match(/carries no signature/)
    })
  }))
