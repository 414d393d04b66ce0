/**
 * The only module that imports node:crypto (docs/design.md, Layout).
 * Everything else hashes and draws randomness through these functions.
 */
import * as nodeCrypto from 'node:crypto'

/** SHA-256 of bytes or a UTF-8 string, as raw bytes. */
export function sha256(data: string | Uint8Array): Buffer {
  return nodeCrypto.hash('sha256', data, 'buffer') as unknown as Buffer
}

/** SHA-256 of bytes or a UTF-8 string, as lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return nodeCrypto.hash('sha256', data, 'hex')
}

/**
 * SHA-256 of `data` written into out[offset..offset+32), for hot loops that keep hashes in flat
 * buffers: a latin1 digest string costs less per call than a Buffer (no ArrayBuffer per digest).
 */
export function sha256Into(data: Uint8Array, out: Buffer, offset: number): void {
  // Node accepts every Buffer encoding here; its typings list only hex, base64 and base64url.
  out.write(nodeCrypto.hash('sha256', data, 'latin1' as 'hex'), offset, 32, 'latin1')
}

export function randomBytes(length: number): Buffer {
  return nodeCrypto.randomBytes(length)
}

// Salts are drawn from a pool refilled by the CSPRNG: one call per 128 salts instead of one each.
const SALT_POOL = Buffer.alloc(32 * 128)
let saltOffset = SALT_POOL.length

/** 32 bytes from the CSPRNG as 64 lower-case hex characters: a commitment's salt (docs/verification.md 2). */
export function randomSaltHex(): string {
  if (saltOffset === SALT_POOL.length) {
    nodeCrypto.randomFillSync(SALT_POOL)
    saltOffset = 0
  }
  const salt = SALT_POOL.toString('hex', saltOffset, saltOffset + 32)
  saltOffset += 32
  return salt
}

// Commitments are hashed in one reused buffer, salt then text, through a view of exactly their
// length kept per length: a commitment allocates nothing (docs/verification.md 2). Longer texts
// get a buffer of their own.
const SALT_BYTES = 32
const SALTED = Buffer.allocUnsafe(8192)
const SALTED_TEXT = SALTED.subarray(SALT_BYTES)
const SALTED_VIEWS = new Array<Buffer | undefined>(SALTED.length + 1).fill(undefined)
const UTF8 = new TextEncoder()

/** The value of each lower-case hex digit by character code, -1 for every other character. */
const HEX_DIGIT = new Int8Array(128).fill(-1)
for (let i = 0; i < 16; i++) HEX_DIGIT['0123456789abcdef'.charCodeAt(i)] = i

/** Whether `text` is `bytes` bytes in lower-case hex (a salt, a hash): a loop costs less than a RegExp. */
export function isLowerHex(text: string, bytes: number): boolean {
  if (text.length !== bytes * 2) return false
  for (let i = 0; i < text.length; i++) if ((HEX_DIGIT[text.charCodeAt(i)] ?? -1) < 0) return false
  return true
}

/** Decodes a salt of 64 hex characters into out[0..32). */
function writeSalt(saltHex: string, out: Buffer): void {
  // Buffer's hex decoding stops at the first pair that is not hex.
  if (saltHex.length !== 2 * SALT_BYTES || out.write(saltHex, 0, SALT_BYTES, 'hex') !== SALT_BYTES) {
    throw new Error('a salt is 64 hex characters')
  }
}

/**
 * SHA-256 over a 32-byte salt (64 hex characters, else it throws) followed by the UTF-8 bytes of
 * `text`, as lower-case hex.
 */
export function saltedSha256Hex(saltHex: string, text: string): string {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  if (text.length * 3 <= SALTED_TEXT.length) {
    writeSalt(saltHex, SALTED)
    const length = SALT_BYTES + UTF8.encodeInto(text, SALTED_TEXT).written
    const view = (SALTED_VIEWS[length] ??= SALTED.subarray(0, length))
    return nodeCrypto.hash('sha256', view, 'hex')
  }
  const bytes = Buffer.allocUnsafe(SALT_BYTES + Buffer.byteLength(text, 'utf8'))
  writeSalt(saltHex, bytes)
  bytes.write(text, SALT_BYTES, 'utf8')
  return nodeCrypto.hash('sha256', bytes, 'hex')
}

/** Compares two strings in constant time with respect to their contents. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  // Hash both sides so that the comparison time does not depend on where they first differ
  // nor leak the secret's length through an early return.
  return nodeCrypto.timingSafeEqual(sha256(left), sha256(right)) && left.length === right.length
}

/** WebCrypto, for pkijs (which signs and verifies RFC 3161 tokens with it). */
export const webcrypto: Crypto = nodeCrypto.webcrypto as unknown as Crypto

/** An Ed25519 key (RFC 8032), by its 32-byte private seed; the KeyObject never leaves this module. */
export interface Ed25519Key {
  readonly publicKey: Buffer
  sign(message: Uint8Array): Buffer
}

// The fixed PKCS#8 header of an Ed25519 private key (RFC 8410 section 7): the seed follows it.
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

export function ed25519FromSeed(seed: Uint8Array): Ed25519Key {
  if (seed.length !== 32) throw new RangeError('an Ed25519 seed is 32 bytes')
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, seed])
  const privateKey = nodeCrypto.createPrivateKey({key: der, format: 'der', type: 'pkcs8'})
  const jwk = nodeCrypto.createPublicKey(privateKey).export({format: 'jwk'})
  return {
    publicKey: Buffer.from(jwk.x!, 'base64url'),
    sign: (message) => nodeCrypto.sign(null, message, privateKey),
  }
}

export function ed25519Generate(): {seed: Buffer; key: Ed25519Key} {
  const seed = nodeCrypto.randomBytes(32)
  return {seed, key: ed25519FromSeed(seed)}
}

/** The seed as a PKCS#8 PEM file (what `openssl pkey -in FILE -pubout` reads). */
export function ed25519SeedToPem(seed: Uint8Array): string {
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, seed])
  const key = nodeCrypto.createPrivateKey({key: der, format: 'der', type: 'pkcs8'})
  return key.export({format: 'pem', type: 'pkcs8'}) as string
}

/** The seed of an Ed25519 PKCS#8 PEM; throws for any other key. */
export function ed25519SeedFromPem(pem: string): Buffer {
  const key = nodeCrypto.createPrivateKey(pem)
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`not an Ed25519 key (${key.asymmetricKeyType})`)
  return Buffer.from(key.export({format: 'jwk'}).d!, 'base64url')
}

/** A verifier for a raw 32-byte Ed25519 public key. */
export function ed25519Verifier(publicKey: Uint8Array): (message: Uint8Array, signature: Uint8Array) => boolean {
  if (publicKey.length !== 32) throw new RangeError('an Ed25519 public key is 32 bytes')
  const jwk = {kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url')}
  const key = nodeCrypto.createPublicKey({key: jwk, format: 'jwk'})
  return (message, signature) => signature.length === 64 && nodeCrypto.verify(null, message, key, signature)
}

/**
 * The public JWK of an agent's signing key (docs/signatures.md): Ed25519 (RFC 8037 section 2) or
 * P-256 (RFC 7518 section 6.2.1), with only the members RFC 7638 section 3.2 hashes.
 */
export type SigningJwk = {kty: 'OKP'; crv: 'Ed25519'; x: string} | {kty: 'EC'; crv: 'P-256'; x: string; y: string}

/** A private signing JWK: the public members and `d`. */
export type PrivateSigningJwk = SigningJwk & {d: string}

/**
 * Checks a JWS signature made with `jwk` over `data`: EdDSA (RFC 8037 section 3.1) for Ed25519,
 * ES256 for P-256 with the signature as R || S of 32 bytes each (RFC 7518 section 3.4). The key is
 * imported once; the function answers false for any signature that does not verify. Throws when
 * the JWK is no valid public key (a P-256 point off the curve, a wrong length).
 */
export function jwkVerifier(jwk: SigningJwk): (data: Uint8Array, signature: Uint8Array) => boolean {
  const key = nodeCrypto.createPublicKey({key: {...jwk}, format: 'jwk'})
  if (jwk.kty === 'OKP')
    return (data, signature) => signature.length === 64 && nodeCrypto.verify(null, data, key, signature)
  const ecKey = {key, dsaEncoding: 'ieee-p1363' as const}
  return (data, signature) => signature.length === 64 && nodeCrypto.verify('sha256', data, ecKey, signature)
}

/** Signs `data` as jwkVerifier checks it, with a private JWK (ES256 signatures are randomised). */
export function signWithJwk(jwk: PrivateSigningJwk, data: Uint8Array): Buffer {
  const key = nodeCrypto.createPrivateKey({key: {...jwk}, format: 'jwk'})
  if (jwk.kty === 'OKP') return nodeCrypto.sign(null, data, key)
  return nodeCrypto.sign('sha256', data, {key, dsaEncoding: 'ieee-p1363'})
}

/** A new private signing JWK from the CSPRNG, as Node exports it (`d` and the public members). */
export function generateSigningJwk(curve: 'Ed25519' | 'P-256'): PrivateSigningJwk {
  const {privateKey} =
    curve === 'Ed25519'
      ? nodeCrypto.generateKeyPairSync('ed25519')
      : nodeCrypto.generateKeyPairSync('ec', {namedCurve: 'P-256'})
  return privateKey.export({format: 'jwk'}) as PrivateSigningJwk
}

/** The public JWK a private one belongs to, recomputed from `d` (so a mismatched `x` is corrected, not trusted). */
export function publicJwkOf(jwk: PrivateSigningJwk): SigningJwk {
  const key = nodeCrypto.createPrivateKey({key: {...jwk}, format: 'jwk'})
  const exported = nodeCrypto.createPublicKey(key).export({format: 'jwk'})
  if (exported.kty === 'OKP') return {kty: 'OKP', crv: 'Ed25519', x: exported.x!}
  return {kty: 'EC', crv: 'P-256', x: exported.x!, y: exported.y!}
}
