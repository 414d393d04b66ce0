/**
 * Agents' signing keys as JWKs (docs/signatures.md): Ed25519 keys of RFC 8037 section 2
 * (`"kty": "OKP"`) and, for COSE statements signed with ES256, P-256 keys of RFC 7518 section 6.2.
 * A key is named by its RFC 7638 thumbprint, computed here, never taken from the sender.
 */
import {jwkVerifier, sha256, type PrivateSigningJwk, type SigningJwk} from '../crypto.js'
import {JwsError} from './errors.js'

export type {PrivateSigningJwk, SigningJwk} from '../crypto.js'

/** The JWS `alg` of each key type: EdDSA (RFC 8037 section 3.1), ES256 (RFC 7518 section 3.4). */
type SigningAlgorithm = 'EdDSA' | 'ES256'

export function algorithmOf(jwk: SigningJwk): SigningAlgorithm {
  return jwk.kty === 'OKP' ? 'EdDSA' : 'ES256'
}

const BASE64URL = /^[A-Za-z0-9_-]*$/
/** Members a public JWK may carry besides the key itself (RFC 7517 section 4); others are refused. */
const OPTIONAL_MEMBERS = new Set(['kid', 'alg', 'use', 'key_ops', 'ext'])

/** A base64url member of `bytes` bytes (RFC 7518 section 6.2.1.2 fixes the P-256 length; RFC 8037 the Ed25519 one). */
function coordinate(jwk: Record<string, unknown>, name: string, bytes: number): string {
  const value = jwk[name]
  const length = Math.ceil((bytes * 4) / 3)
  if (typeof value !== 'string' || !BASE64URL.test(value) || value.length !== length) {
    throw new JwsError('bad_jwk', `${name} must be ${bytes} bytes in base64url without padding (${length} characters)`)
  }
  return value
}

/**
 * The public signing key a JWK describes, reduced to the members its thumbprint covers. Refuses a
 * private key (`d`: a private key is never sent to the log), other key types and curves, an `alg`
 * or `use` that contradicts the key, members that are not JWK members, and keys Node cannot import
 * (a P-256 point that is not on the curve).
 */
export function parsePublicJwk(value: unknown): SigningJwk {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new JwsError('bad_jwk', 'must be a JWK object')
  const jwk = value as Record<string, unknown>
  if (Object.hasOwn(jwk, 'd'))
    throw new JwsError('bad_jwk', 'is a private key (it has d): register the public key only')
  let key: SigningJwk
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    key = {kty: 'OKP', crv: 'Ed25519', x: coordinate(jwk, 'x', 32)}
  } else if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
    key = {kty: 'EC', crv: 'P-256', x: coordinate(jwk, 'x', 32), y: coordinate(jwk, 'y', 32)}
  } else {
    throw new JwsError(
      'bad_jwk',
      'must be an Ed25519 key ("kty": "OKP", "crv": "Ed25519") or a P-256 key ("kty": "EC")',
    )
  }
  const extra = Object.keys(jwk).filter((name) => !Object.hasOwn(key, name) && !OPTIONAL_MEMBERS.has(name))
  if (extra.length > 0) throw new JwsError('bad_jwk', `has ${extra.join(', ')}, not a member of a public signing JWK`)
  if (jwk.alg !== undefined && jwk.alg !== algorithmOf(key))
    throw new JwsError('bad_jwk', `alg must be ${algorithmOf(key)}`)
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new JwsError('bad_jwk', 'use must be sig')
  try {
    jwkVerifier(key)
  } catch (error) {
    throw new JwsError('bad_jwk', `is not a valid ${key.crv} public key (${(error as Error).message})`, {cause: error})
  }
  return key
}

/**
 * The JSON the RFC 7638 thumbprint hashes (section 3.2): the required members in lexicographic
 * order, no whitespace. Every member is base64url or a fixed name, so no escaping is needed.
 */
export function thumbprintInput(jwk: SigningJwk): string {
  if (jwk.kty === 'OKP') return `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}"}`
  return `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`
}

/** The key's RFC 7638 thumbprint with SHA-256, base64url: its `kid` (docs/signatures.md). */
export function jwkThumbprint(jwk: SigningJwk): string {
  return sha256(thumbprintInput(jwk)).toString('base64url')
}

/** A kid as this service makes them: a SHA-256 thumbprint, 43 base64url characters. */
export const KID_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** A private signing JWK read from a file (`agent-keys generate` writes one); throws JwsError bad_jwk. */
export function parsePrivateJwk(value: unknown): PrivateSigningJwk {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new JwsError('bad_jwk', 'must be a JWK object')
  const {d, ...rest} = value as Record<string, unknown>
  if (typeof d !== 'string' || !BASE64URL.test(d) || d.length !== 43) {
    throw new JwsError('bad_jwk', 'is not a private key: d must be 32 bytes in base64url')
  }
  return {...parsePublicJwk(rest), d}
}
