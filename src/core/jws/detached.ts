/**
 * JWS compact serialization with a detached payload (RFC 7515 section 7.1 and appendix F):
 * `BASE64URL(protected header) || '..' || BASE64URL(signature)`, the payload left out and supplied
 * by the verifier. The signing input stays that of section 5.1, `ASCII(BASE64URL(header) || '.' ||
 * BASE64URL(payload))`, so any JOSE library verifies it once the payload is put back.
 */
import {jwkVerifier, publicJwkOf, signWithJwk, type PrivateSigningJwk, type SigningJwk} from '../crypto.js'
import {algorithmOf, jwkThumbprint} from './jwk.js'
import {JwsError} from './errors.js'

/** A detached compact JWS taken apart; `header` is the decoded protected header. */
export interface DetachedJws {
  protectedB64: string
  header: Record<string, unknown>
  signature: Buffer
}

const DETACHED = /^([A-Za-z0-9_-]+)\.\.([A-Za-z0-9_-]+)$/

/**
 * Splits and decodes a detached compact JWS. Refuses header parameters this profile leaves out
 * (`crit`, RFC 7515 section 4.1.11, must be understood; `b64`, RFC 7797, changes the signing
 * input) and a header without a string `alg` and `kid`.
 */
export function parseDetachedJws(jws: string): DetachedJws {
  const match = DETACHED.exec(jws)
  if (!match)
    throw new JwsError('malformed_jws', 'is not a compact JWS with a detached payload (<header>..<signature>)')
  let header: unknown
  try {
    header = JSON.parse(Buffer.from(match[1]!, 'base64url').toString('utf8'))
  } catch {
    throw new JwsError('malformed_jws', 'has a protected header that is not JSON')
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new JwsError('malformed_jws', 'has a protected header that is not a JSON object')
  }
  const fields = header as Record<string, unknown>
  if (typeof fields.alg !== 'string') throw new JwsError('malformed_jws', 'has no alg in its protected header')
  if (typeof fields.kid !== 'string') throw new JwsError('malformed_jws', 'has no kid in its protected header')
  for (const name of ['crit', 'b64']) {
    if (Object.hasOwn(fields, name))
      throw new JwsError('malformed_jws', `has the header parameter ${name}, which is not supported`)
  }
  return {protectedB64: match[1]!, header: fields, signature: Buffer.from(match[2]!, 'base64url')}
}

/** The RFC 7515 section 5.1 signing input of a protected header (base64url) and a payload. */
export function jwsSigningInput(protectedB64: string, payload: string | Uint8Array): Buffer {
  return Buffer.from(`${protectedB64}.${Buffer.from(payload).toString('base64url')}`, 'ascii')
}

/**
 * Signs `payload` with a private JWK as a detached compact JWS whose protected header is
 * `{"alg": ..., "kid": <RFC 7638 thumbprint>}` (docs/signatures.md).
 */
export function signDetached(payload: string | Uint8Array, key: PrivateSigningJwk): string {
  const publicKey = publicJwkOf(key)
  const header = {alg: algorithmOf(publicKey), kid: jwkThumbprint(publicKey)}
  const protectedB64 = Buffer.from(JSON.stringify(header)).toString('base64url')
  return `${protectedB64}..${signWithJwk(key, jwsSigningInput(protectedB64, payload)).toString('base64url')}`
}

/** detachedJwsFault's answer for a well-formed signature that does not verify (wrong key, or other content). */
export const DOES_NOT_VERIFY = 'it does not verify'

/**
 * Why a parsed detached JWS does not verify over `payload` with `jwk`, or undefined when it does.
 * `verify` is jwkVerifier(jwk), passed in so that a caller checking many signatures imports each key once.
 */
export function detachedJwsFault(
  jws: DetachedJws,
  payload: string | Uint8Array,
  jwk: SigningJwk,
  verify: (data: Uint8Array, signature: Uint8Array) => boolean = jwkVerifier(jwk),
): string | undefined {
  const alg = algorithmOf(jwk)
  // RFC 8725 section 3.1: the algorithm is the key's, never the one a header asks for.
  if (jws.header.alg !== alg) return `its alg is ${JSON.stringify(jws.header.alg)} where the key is for ${alg}`
  if (jws.signature.length !== 64) return `its signature is ${jws.signature.length} bytes, not 64`
  return verify(jwsSigningInput(jws.protectedB64, payload), jws.signature) ? undefined : DOES_NOT_VERIFY
}
