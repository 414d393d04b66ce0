import {expect} from 'chai'
import {checkSignedStatement, CoseError, MAX_STATEMENT_BYTES, type CoseErrorCode} from '../../../src/core/cose/index.js'
import {fakeLookup, signedStatement, testAgentKey} from '../../support/statements.js'

async function refusal(promise: Promise<unknown>): Promise<CoseError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof CoseError) return error
    throw error
  }
  throw new Error('the statement was accepted')
}

describe('signed statements (SCRAPI registration checks)', () => {
  const ed = testAgentKey('Ed25519')
  const p256 = testAgentKey('P-256')
  const revoked = testAgentKey('Ed25519')
  const stranger = testAgentKey('Ed25519')
  const lookup = fakeLookup([
    [ed, {agentId: 'billing-bot', registeredIndex: 0}],
    [p256, {agentId: 'build-bot', registeredIndex: 1}],
    [revoked, {agentId: 'billing-bot', registeredIndex: 2, revokedIndex: 5}],
  ])

  it('accepts an EdDSA statement by a registered key, with its claims', async () => {
    const bytes = signedStatement(ed, {iss: 'billing-bot', sub: 'invoice-7'})
    const checked = await checkSignedStatement(bytes, lookup)
    expect(checked).to.include({agentId: 'billing-bot', kid: ed.kid, alg: 'EdDSA', issuer: 'billing-bot'})
    expect(checked.subject).to.equal('invoice-7')
    expect(checked.contentType).to.equal('application/json')
    expect(Buffer.from(checked.payload).toString()).to.equal('{"artifact":"build-42"}')
  })

  it('accepts ES256 by a P-256 key, and a kid sent as text', async () => {
    const checked = await checkSignedStatement(signedStatement(p256, {iss: 'build-bot', kid: p256.kid}), lookup)
    expect(checked).to.include({agentId: 'build-bot', alg: 'ES256'})
  })

  const cases: Array<[string, () => Uint8Array, CoseErrorCode, RegExp]> = [
    [
      'a bad signature',
      () => signedStatement(ed, {iss: 'billing-bot', signWith: stranger}),
      'bad_signature',
      /does not verify/,
    ],
    ['an unknown kid', () => signedStatement(stranger, {iss: 'billing-bot'}), 'unknown_key', /no agent key/],
    ['a revoked key', () => signedStatement(revoked, {iss: 'billing-bot'}), 'revoked_key', /revoked at index 5/],
    [
      'an iss that is not the key’s agent',
      () => signedStatement(ed, {iss: 'build-bot'}),
      'wrong_issuer',
      /billing-bot/,
    ],
    ['no CWT claims', () => signedStatement(ed), 'malformed', /CWT claims/],
    ['no kid', () => signedStatement(ed, {iss: 'billing-bot', kid: null}), 'malformed', /no kid/],
    ['no alg', () => signedStatement(ed, {iss: 'billing-bot', alg: null}), 'unsupported', /no alg/],
    ['an unsupported alg', () => signedStatement(ed, {iss: 'billing-bot', alg: -35}), 'unsupported', /-35/],
    [
      'ES256 claimed over an Ed25519 key',
      () => signedStatement(ed, {iss: 'billing-bot', alg: -7}),
      'unsupported',
      /cannot verify ES256/,
    ],
    [
      'a critical parameter',
      () => signedStatement(ed, {iss: 'billing-bot', extra: [[2, [99]]]}),
      'unsupported',
      /crit/,
    ],
    [
      'a detached payload',
      () => signedStatement(ed, {iss: 'billing-bot', payload: null}),
      'payload_missing',
      /detached/,
    ],
    ['malformed CBOR', () => Buffer.from('d28443a10127', 'hex'), 'malformed', /not well-formed CBOR/],
    ['JSON instead of CBOR', () => Buffer.from('{"statement": 1}'), 'malformed', /./],
    [
      'a statement over the size limit',
      () => signedStatement(ed, {iss: 'billing-bot', payload: Buffer.alloc(MAX_STATEMENT_BYTES)}),
      'too_large',
      /at most 1048576/,
    ],
  ]
  for (const [what, make, code, message] of cases) {
    it(`refuses ${what}`, async () => {
      const error = await refusal(checkSignedStatement(make(), lookup))
      expect(error.code).to.equal(code)
      expect(error.message).to.match(message)
    })
  }
})
