/**
 * An agent's signature over an event (docs/signatures.md): the signing input rebuilt from a stored
 * event alone, cross-checked with `canonicalize` and `jose`; every reason an event has no valid
 * signature; and a signature that still verifies once a payload member is erased.
 */
import {expect} from 'chai'
import canonicalize from 'canonicalize'
import * as jose from 'jose'
import {generateSigningJwk, publicJwkOf} from '../../../src/core/crypto.js'
import {jwkThumbprint} from '../../../src/core/jws/jwk.js'
import {
  KeyTimeline,
  SignatureChecker,
  signatureFault,
  signEvent,
  signingInputOf,
} from '../../../src/core/signature/index.js'
import type {StoredEvent} from '../../../src/core/types.js'
import {registration, revocation, stored} from './support.js'

const key = generateSigningJwk('Ed25519')
const publicJwk = publicJwkOf(key)
const kid = jwkThumbprint(publicJwk)
const other = generateSigningJwk('P-256')

const BODY = {
  id: '0190C1A2-7B3C-7D4E-8F90-0123456789AB',
  agent_id: 'bot',
  action_type: 'TOOL_CALL',
  action_name: 'crm.lookup',
  timestamp: '2026-11-28T11:00:00+01:00',
  input: {customer: 'Zoë'},
  error: 'timeout',
}

/** The signed body as the service stores it at `index`. */
function signedAt(index: number, body: Record<string, unknown> = BODY, jwk: object = key): StoredEvent {
  return stored(signEvent(body, jwk), index)
}

/** The timeline: `bot` registers `key` at 0, `other` (P-256) at 1 for agent `someone`. */
function timeline(): KeyTimeline {
  const keys = new KeyTimeline()
  keys.apply(registration('bot', publicJwk, 0))
  keys.apply(registration('someone', publicJwkOf(other), 1))
  return keys
}

const checker = (keys: KeyTimeline) => new SignatureChecker((id) => keys.owner(id)?.jwk)
const faultOf = (event: StoredEvent, keys = timeline()) =>
  signatureFault(event.agent_id, event.index, checker(keys).check(event), keys)

describe("an agent's signature over an event", () => {
  it('signs the JCS of the client members with defaults, commitments for the payload, no salts', () => {
    const event = signedAt(5)
    const independent = canonicalize({
      id: BODY.id.toLowerCase(),
      agent_id: 'bot',
      action_type: 'TOOL_CALL',
      action_name: 'crm.lookup',
      action_status: 'success',
      timestamp: '2026-11-28T10:00:00.000Z',
      labels: {},
      commitments: event.commitments,
    })
    expect(signingInputOf(event)).to.equal(independent)
    expect(Object.keys(event.commitments!)).to.deep.equal(['input', 'error'])
  })

  it('jose verifies the JWS signEvent makes, with the payload rebuilt from the stored event', async () => {
    const event = signedAt(5)
    const [protectedB64, , signature] = event.signature!.split('.')
    const payload = Buffer.from(signingInputOf(event)).toString('base64url')
    const result = await jose.flattenedVerify(
      {protected: protectedB64!, payload, signature: signature!},
      await jose.importJWK(publicJwk, 'EdDSA'),
    )
    expect(result.protectedHeader).to.deep.equal({alg: 'EdDSA', kid})
  })

  it('our checker accepts a JWS jose makes over the signing input', async () => {
    const unsigned = stored({...BODY, salts: signEvent(BODY, key).salts}, 5)
    const compact = await new jose.CompactSign(Buffer.from(signingInputOf(unsigned)))
      .setProtectedHeader({alg: 'EdDSA', kid})
      .sign(await jose.importJWK(key, 'EdDSA'))
    const [header, , signature] = compact.split('.')
    const event = {...unsigned, signature: `${header}..${signature}`}
    expect(checker(timeline()).check(event)).to.deep.equal({kid})
    expect(faultOf(event)).to.equal(undefined)
  })

  it('still verifies once a payload member and its salt are erased: it covers the commitment', () => {
    const {input: _value, salts, ...rest} = signedAt(5)
    const erased = {...rest, salts: {error: salts!.error!}, erased: {input: '0190c000-0000-7000-8000-ffffffffffff'}}
    expect(faultOf(erased as StoredEvent)).to.equal(undefined)
  })

  describe('every reason an event has no valid signature by its agent', () => {
    const unsigned = stored({agent_id: 'bot', action_type: 'TOOL_CALL', action_name: 'x'}, 5)
    const cases: Array<[string, () => StoredEvent, () => KeyTimeline, string, RegExp]> = [
      ['an unsigned event of an agent with a key', () => unsigned, timeline, 'missing_signature', /^missing signature/],
      [
        'a signed event of an agent with no key',
        () => signedAt(5, {...BODY, agent_id: 'nobody'}),
        timeline,
        'no_key',
        /^no key: agent nobody has no key/,
      ],
      [
        'a key of another agent',
        () => signedAt(5, BODY, other),
        timeline,
        'unknown_key',
        /^unknown key: .* is not a key of agent bot \(it is a key of agent someone\)/,
      ],
      [
        'a key the log does not know',
        () => signedAt(5, BODY, generateSigningJwk('Ed25519')),
        timeline,
        'unknown_key',
        /^unknown key: .* is not a key of agent bot$/,
      ],
      [
        'a key registered after the event',
        () => signedAt(1),
        () => {
          const keys = new KeyTimeline()
          keys.apply(registration('bot', publicJwkOf(other), 0))
          keys.apply(registration('bot', publicJwk, 3))
          return keys
        },
        'unknown_key',
        /registered for agent bot at index 3, after this event/,
      ],
      [
        'a revoked key',
        () => signedAt(5),
        () => {
          const keys = timeline()
          keys.apply(revocation('bot', publicJwk, 4))
          return keys
        },
        'revoked_key',
        /^revoked key: .* revoked at index 4, before this event/,
      ],
      [
        'a corrupted signature',
        () => {
          const event = signedAt(5)
          const last = event.signature!.at(-2) === 'A' ? 'B' : 'A'
          return {...event, signature: event.signature!.slice(0, -2) + last + event.signature!.at(-1)}
        },
        timeline,
        'bad_signature',
        /^bad signature: it does not verify with key/,
      ],
      [
        'a signature over other content',
        () => ({...signedAt(5), action_name: 'crm.delete'}),
        timeline,
        'bad_signature',
        /over other content/,
      ],
      [
        'a signature that is no JWS',
        () => ({...unsigned, signature: 'bm90..andz'}),
        timeline,
        'bad_signature',
        /^bad signature: the signature has a protected header that is not JSON/,
      ],
    ]
    for (const [what, event, keys, problem, message] of cases) {
      it(what, () => {
        const fault = faultOf(event(), keys())
        expect(fault?.problem).to.equal(problem)
        expect(fault?.message).to.match(message)
      })
    }

    it('none for an unsigned event of an agent with no key, or before its first key', () => {
      expect(faultOf({...unsigned, agent_id: 'nobody'})).to.equal(undefined)
      expect(faultOf({...unsigned, index: 0})).to.equal(undefined)
    })
  })
})
