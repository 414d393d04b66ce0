import {expect} from 'chai'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {ed25519Verifier, jwkVerifier, type SigningJwk} from '../../src/core/crypto.js'
import {
  decodeKeySet,
  decodeProblem,
  decodeReceipt,
  decodeSign1,
  HEADER,
  MAX_STATEMENT_BYTES,
  verifyReceipt,
  verifySign1,
} from '../../src/core/cose/index.js'
import {hashLeaf} from '../../src/core/merkle/index.js'
import {parseVerifierKey} from '../../src/core/note/index.js'
import {makeEvent, type TestApi} from '../support/harness.js'
import {describeOnTrails, startApiOn, urlOf} from '../support/trails.js'
import {signedStatement, testAgentKey} from '../support/statements.js'

async function fetchBytes(api: TestApi, path: string, init: RequestInit = {}) {
  const response = await fetch(urlOf(api, path), init)
  return {status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer())}
}

async function logKey(api: TestApi, headers: Record<string, string> = {}) {
  const {body} = await api.request('GET', '/v1/log/key', {headers})
  const {publicKey} = parseVerifierKey(body.verifier_key)
  return {publicKey, verify: ed25519Verifier(publicKey)}
}

async function record(api: TestApi, count: number): Promise<Array<{id: string; hash: string; index: number}>> {
  const events = []
  for (let i = 0; i < count; i++) events.push((await api.request('POST', '/v1/events', {body: makeEvent()})).body)
  return events
}

describeOnTrails('receipts over HTTP: GET /v1/events/:id/receipt and the COSE Key Set', function (trail) {
  this.timeout(60_000)
  let api: TestApi
  beforeEach(async () => {
    api = await startApiOn(trail)
  })
  afterEach(async () => {
    await api.close()
  })

  it('answers a receipt over the latest checkpoint that any RFC 9942 verifier accepts with the log key', async () => {
    const events = await record(api, 5)
    const {status, headers, bytes} = await fetchBytes(api, `/v1/events/${events[2]!.id}/receipt`)
    expect(status).to.equal(200)
    expect(headers.get('content-type')).to.equal('application/cose')
    const verified = verifyReceipt(bytes, hashLeaf(Buffer.from(events[2]!.hash, 'hex')), await logKey(api))
    expect(verified).to.include({treeSize: 5, leafIndex: 2, treeSizeSigned: true})
    // The receipt's tree is the checkpoint's, signed for it: same size, same root.
    const checkpoint = await api.request('GET', '/tlog/checkpoint')
    const [, size, root] = checkpoint.text.split('\n')
    expect(Number(size)).to.equal(5)
    expect(Buffer.from(verified.root).toString('base64')).to.equal(root)
    expect(verified.issuer).to.equal((await api.request('GET', '/v1/log/key')).body.origin)
  })

  it('keeps to the latest checkpoint while it holds the event, and signs a newer one when it does not', async () => {
    const events = await record(api, 3)
    const first = await fetchBytes(api, `/v1/events/${events[0]!.id}/receipt`)
    expect(decodeReceipt(first.bytes).proofs[0]!.treeSize).to.equal(3)
    events.push(...(await record(api, 2)))
    const again = await fetchBytes(api, `/v1/events/${events[0]!.id}/receipt`)
    expect(decodeReceipt(again.bytes).proofs[0]!.treeSize).to.equal(3)
    const started = Date.now()
    const newer = await fetchBytes(api, `/v1/events/${events[4]!.id}/receipt`)
    expect(decodeReceipt(newer.bytes).proofs[0]!.treeSize).to.equal(5)
    const checkpoints = await api.services.store.listCheckpoints()
    expect(checkpoints.map((c) => c.tree_size)).to.deep.equal([3, 5])
    // At most one checkpoint a second (CONTRACT section 9).
    expect(Date.parse(checkpoints[1]!.signed_at) - Date.parse(checkpoints[0]!.signed_at)).to.be.at.least(1000)
    expect(Date.now() - started).to.be.below(5000)
  })

  it('answers ?tree_size=n for any tree that holds the event, and refuses the others', async () => {
    const events = await record(api, 6)
    const key = await logKey(api)
    const small = await fetchBytes(api, `/v1/events/${events[1]!.id}/receipt?tree_size=2`)
    expect(verifyReceipt(small.bytes, hashLeaf(Buffer.from(events[1]!.hash, 'hex')), key).treeSize).to.equal(2)
    for (const [query, status, field] of [
      ['tree_size=1', 400, 'tree_size'],
      ['tree_size=7', 400, 'tree_size'],
      ['tree_size=abc', 400, 'tree_size'],
      ['tree_size=-1', 400, 'tree_size'],
    ] as const) {
      const response = await api.request('GET', `/v1/events/${events[1]!.id}/receipt?${query}`)
      expect(response.status, query).to.equal(status)
      expect(response.body.error.code).to.equal('validation_error')
      expect(response.body.error.details[0].field).to.equal(field)
    }
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await api.request('GET', `/v1/events/${id}/receipt`)
      expect(response.status).to.equal(404)
      expect(response.body.error.code).to.equal('not_found')
    }
  })

  it('signs no receipt over a tree whose stored root is not its checkpoint’s (409)', async () => {
    const events = await record(api, 3)
    const {origin} = await api.services.checkpoints.identity()
    // A checkpoint that says another root for the stored tree, as after the store was rewritten.
    await api.services.store.appendCheckpoint({
      tree_size: 3,
      root: 'ab'.repeat(32),
      note: `${origin}\n3\nq6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n\n`,
      cosignatures: [],
      signed_at: new Date().toISOString(),
    })
    const response = await api.request('GET', `/v1/events/${events[0]!.id}/receipt`)
    expect(response.status).to.equal(409)
    expect(response.body.error.code).to.equal('conflict')
    expect(response.body.error.message).to.match(/no longer has the root of the checkpoint/)
  })

  it('exports a receipt per event with ?receipts=true, and refuses another value', async () => {
    const events = await record(api, 4)
    const exported = await api.request('GET', '/v1/export?receipts=true&agent_id=agent-1')
    expect(exported.status).to.equal(200)
    expect(Object.keys(exported.body.receipts)).to.have.members(events.map((e) => e.id))
    const key = await logKey(api)
    for (const event of events) {
      const receipt = Buffer.from(exported.body.receipts[event.id], 'base64')
      expect(verifyReceipt(receipt, hashLeaf(Buffer.from(event.hash, 'hex')), key).treeSize).to.equal(4)
    }
    expect((await api.request('GET', '/v1/export')).body).to.not.have.property('receipts')
    const refused = await api.request('GET', '/v1/export?receipts=yes')
    expect(refused.status).to.equal(400)
    expect(refused.body.error.details).to.deep.equal([{field: 'receipts', message: 'must be true or false'}])
  })

  it('serves the log key as a COSE Key Set whose kid is the receipts’ kid', async () => {
    const [event] = await record(api, 1)
    const set = await fetchBytes(api, '/.well-known/scitt-keys')
    expect(set.status).to.equal(200)
    expect(set.headers.get('content-type')).to.equal('application/cbor')
    // The service's set holds every trail's key (docs/api.md, "Trails"): the default's, and this trail's.
    const keys = decodeKeySet(set.bytes)
    expect(keys).to.have.length(trail === undefined ? 1 : 2)
    const {publicKey} = await logKey(api)
    const key = keys.find((k) => Buffer.from(k.publicKey).equals(publicKey))!
    const receipt = decodeReceipt((await fetchBytes(api, `/v1/events/${event!.id}/receipt`)).bytes)
    expect(Buffer.from(receipt.kid)).to.deep.equal(Buffer.from(key.kid!))
    const one = await fetchBytes(api, `/.well-known/scitt-keys/${Buffer.from(receipt.kid).toString('base64url')}`)
    expect(one.status).to.equal(200)
    expect(decodeKeySet(Buffer.concat([Buffer.from([0x81]), one.bytes]))).to.have.length(1)
    const unknown = await fetchBytes(api, '/.well-known/scitt-keys/AAAA')
    expect(unknown.status).to.equal(404)
    expect(unknown.headers.get('content-type')).to.equal('application/concise-problem-details+cbor')
    expect(decodeProblem(unknown.bytes)?.title).to.equal('No such key')
  })
})

describeOnTrails('SCRAPI registration: POST /entries and GET /entries/:id', function (trail) {
  this.timeout(60_000)
  const agent = testAgentKey('Ed25519')
  const p256 = testAgentKey('P-256')
  const revoked = testAgentKey('Ed25519')
  const stranger = testAgentKey('Ed25519')
  const KEY = 'w'.repeat(24)
  const READER = 'r'.repeat(24)
  let api: TestApi
  // The agents' keys registered in the log itself (docs/api.md, Agent keys), as an operator does.
  beforeEach(async () => {
    api = await startApiOn(trail, {app: {apiKeys: parseKeyFile(`${KEY} read,write,admin\n${READER} read\n`)}})
    const headers = {authorization: `Bearer ${KEY}`}
    for (const [key, agentId] of [
      [agent, 'billing-bot'],
      [p256, 'build-bot'],
      [revoked, 'billing-bot'],
    ] as const) {
      const put = await api.request('PUT', `/v1/agents/${agentId}/keys/${key.kid}`, {body: key.jwk, headers})
      expect(put.status, JSON.stringify(put.body)).to.equal(201)
    }
    const revoke = await api.request('DELETE', `/v1/agents/billing-bot/keys/${revoked.kid}`, {headers})
    expect(revoke.status, JSON.stringify(revoke.body)).to.equal(200)
  })
  afterEach(async () => {
    await api.close()
  })
  const post = (body: Uint8Array, headers: Record<string, string> = {}) =>
    fetchBytes(api, '/entries', {
      method: 'POST',
      body: body as BodyInit,
      headers: {'content-type': 'application/cose', authorization: `Bearer ${KEY}`, ...headers},
    })
  const get = (path: string) => fetchBytes(api, path, {headers: {authorization: `Bearer ${KEY}`}})

  for (const [name, key, agentId] of [
    ['EdDSA', agent, 'billing-bot'],
    ['ES256', p256, 'build-bot'],
  ] as const) {
    it(`records a valid ${name} statement and answers the transparent statement`, async () => {
      const statement = signedStatement(key, {iss: agentId, sub: 'release-1.2.3'})
      const {status, headers, bytes} = await post(statement)
      expect(status).to.equal(201)
      expect(headers.get('content-type')).to.equal('application/cose')
      const id = headers.get('location')!.replace('/entries/', '')
      const stored = (await api.request('GET', `/v1/events/${id}`, {headers: {authorization: `Bearer ${KEY}`}})).body
      expect(stored).to.include({agent_id: agentId, action_type: 'SIGNED_STATEMENT', action_name: 'statement.register'})
      expect(Buffer.from(stored.input.statement, 'base64')).to.deep.equal(Buffer.from(statement))
      expect(stored.metadata).to.deep.include({kid: key.kid, iss: agentId, sub: 'release-1.2.3'})
      // The statement, unchanged but for header 394, still verifies; its receipt proves the event.
      const transparent = decodeSign1(bytes)
      expect(verifySign1(transparent, jwkVerifier(key.jwk as SigningJwk))).to.equal(true)
      const [receipt] = transparent.unprotectedHeader.get(HEADER.receipts) as Uint8Array[]
      const verified = verifyReceipt(
        receipt!,
        hashLeaf(Buffer.from(stored.hash, 'hex')),
        await logKey(api, {authorization: `Bearer ${KEY}`}),
      )
      expect(verified.leafIndex).to.equal(stored.index)
      // GET /entries/<id> answers the receipt.
      const again = await get(`/entries/${id}`)
      expect(again.status).to.equal(200)
      expect(
        verifyReceipt(
          again.bytes,
          hashLeaf(Buffer.from(stored.hash, 'hex')),
          await logKey(api, {authorization: `Bearer ${KEY}`}),
        ).leafIndex,
      ).to.equal(stored.index)
    })
  }

  const refusals: Array<[string, () => Uint8Array, number, string, Record<string, string>?]> = [
    ['a bad signature', () => signedStatement(agent, {iss: 'billing-bot', signWith: stranger}), 400, 'Bad Signature'],
    ['an unknown kid', () => signedStatement(stranger, {iss: 'billing-bot'}), 400, 'Unknown Key'],
    ['a revoked key', () => signedStatement(revoked, {iss: 'billing-bot'}), 400, 'Revoked Key'],
    ['an iss that is not the key’s agent', () => signedStatement(agent, {iss: 'build-bot'}), 400, 'Wrong Issuer'],
    ['malformed CBOR', () => Buffer.from('d28443a1012', 'hex'), 400, 'Malformed request'],
    [
      'a statement over the size limit',
      () => signedStatement(agent, {iss: 'billing-bot', payload: Buffer.alloc(MAX_STATEMENT_BYTES)}),
      413,
      'Payload Too Large',
    ],
    [
      'a body that is not application/cose',
      () => signedStatement(agent, {iss: 'billing-bot'}),
      415,
      'Unsupported Media Type',
      {'content-type': 'application/json'},
    ],
    [
      'a key without the write scope',
      () => signedStatement(agent, {iss: 'billing-bot'}),
      403,
      'Forbidden',
      {authorization: `Bearer ${READER}`},
    ],
  ]
  for (const [what, make, status, title, headers] of refusals) {
    it(`refuses ${what} with concise problem details, recording nothing`, async () => {
      const response = await post(make(), headers)
      expect(response.status).to.equal(status)
      expect(response.headers.get('content-type')).to.equal('application/concise-problem-details+cbor')
      const problem = decodeProblem(response.bytes)
      expect(problem?.title).to.equal(title)
      expect(problem?.detail).to.be.a('string').and.not.equal('')
      // Only the three key registrations and the revocation.
      expect(await api.services.store.count()).to.equal(4)
    })
  }

  it("counts a statement as its agent's signed event: verify holds, an unsigned event is refused", async () => {
    const headers = {authorization: `Bearer ${KEY}`}
    expect((await post(signedStatement(agent, {iss: 'billing-bot'}))).status).to.equal(201)
    const verify = await api.request('GET', '/v1/verify?agent_id=billing-bot', {headers})
    expect(verify.body).to.include({valid: true, events_checked: 1})
    const unsigned = await api.request('POST', '/v1/events', {body: makeEvent({agent_id: 'billing-bot'}), headers})
    expect(unsigned.status).to.equal(400)
    expect(unsigned.body.error.code).to.equal('invalid_signature')
  })

  it('answers 401 as problem details with WWW-Authenticate, and 404 for an unknown entry', async () => {
    const anonymous = await fetchBytes(api, '/entries', {
      method: 'POST',
      body: signedStatement(agent, {iss: 'billing-bot'}) as BodyInit,
      headers: {'content-type': 'application/cose'},
    })
    expect(anonymous.status).to.equal(401)
    expect(anonymous.headers.get('www-authenticate')).to.equal('Bearer')
    expect(decodeProblem(anonymous.bytes)?.title).to.equal('Unauthorized')
    const missing = await get('/entries/00000000-0000-4000-8000-000000000000')
    expect(missing.status).to.equal(404)
    expect(decodeProblem(missing.bytes)?.title).to.equal('Not Found')
    // The key set needs no API key.
    expect((await fetchBytes(api, '/.well-known/scitt-keys')).status).to.equal(200)
  })
})
