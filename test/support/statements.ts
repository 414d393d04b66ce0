/**
 * Signed statements as an agent makes them (draft-ietf-scitt-scrapi): keys and signatures straight
 * from node:crypto, the COSE_Sign1 assembled here, so that tests of the verifier share nothing of
 * its signature code.
 */
import {createHash, generateKeyPairSync, sign as nodeSign, type KeyObject} from 'node:crypto'
import {encodeCbor, tagged} from '../../src/core/cose/index.js'
import type {AgentKey} from '../../src/core/cose/index.js'

export interface TestAgentKey {
  jwk: {kty: string; crv: string; x: string; y?: string}
  /** RFC 7638 thumbprint (base64url), the kid of CONTRACT 2.6. */
  kid: string
  alg: -8 | -7
  sign(toBeSigned: Uint8Array): Buffer
}

export function testAgentKey(curve: 'Ed25519' | 'P-256' = 'Ed25519'): TestAgentKey {
  const {privateKey, publicKey} =
    curve === 'Ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', {namedCurve: 'P-256'})
  const exported = publicKey.export({format: 'jwk'}) as TestAgentKey['jwk']
  // RFC 7638 section 3.2: the required members in lexicographic order, no whitespace.
  const members =
    curve === 'Ed25519'
      ? {crv: exported.crv, kty: exported.kty, x: exported.x}
      : {crv: exported.crv, kty: exported.kty, x: exported.x, y: exported.y}
  const kid = createHash('sha256').update(JSON.stringify(members)).digest('base64url')
  return {jwk: members, kid, alg: curve === 'Ed25519' ? -8 : -7, sign: signer(privateKey, curve)}
}

function signer(privateKey: KeyObject, curve: 'Ed25519' | 'P-256') {
  return (toBeSigned: Uint8Array) =>
    curve === 'Ed25519'
      ? nodeSign(null, toBeSigned, privateKey)
      : nodeSign('sha256', toBeSigned, {key: privateKey, dsaEncoding: 'ieee-p1363'})
}

export interface StatementOptions {
  iss?: string
  sub?: string
  payload?: Uint8Array | null
  /** Overrides the kid (text, or bytes); `null` leaves it out. */
  kid?: string | Uint8Array | null
  alg?: number | null
  /** Extra protected header parameters. */
  extra?: Array<[number, unknown]>
  /** Sign with this key instead of the one named. */
  signWith?: TestAgentKey
}

/** A tagged COSE_Sign1 statement by `key` with CWT claims {iss, sub}, its payload attached. */
export function signedStatement(key: TestAgentKey, options: StatementOptions = {}): Uint8Array {
  const header = new Map<number, unknown>()
  if (options.alg !== null) header.set(1, options.alg ?? key.alg)
  if (options.kid !== null) header.set(4, options.kid ?? Buffer.from(key.kid))
  header.set(3, 'application/json')
  const claims = new Map<number, unknown>()
  if (options.iss !== undefined) claims.set(1, options.iss)
  if (options.sub !== undefined) claims.set(2, options.sub)
  if (claims.size > 0) header.set(15, claims)
  for (const [label, value] of options.extra ?? []) header.set(label, value)
  const protectedBytes = encodeCbor(header)
  const payload = options.payload === undefined ? Buffer.from('{"artifact":"build-42"}') : options.payload
  // RFC 9052 section 4.4, by hand: ["Signature1", protected, h'', payload].
  const toBeSigned = encodeCbor(['Signature1', protectedBytes, new Uint8Array(0), payload ?? new Uint8Array(0)])
  const signature = (options.signWith ?? key).sign(toBeSigned)
  return encodeCbor(tagged(18, [protectedBytes, new Map(), payload, signature]))
}

/** A lookup over fixed keys, as the key registry answers (CONTRACT 2.6). */
export function fakeLookup(entries: Array<[TestAgentKey, Omit<AgentKey, 'jwk'>]>) {
  const byKid = new Map(entries.map(([key, info]) => [key.kid, {...info, jwk: key.jwk as AgentKey['jwk']}]))
  return (kid: string): AgentKey | undefined => byKid.get(kid)
}
