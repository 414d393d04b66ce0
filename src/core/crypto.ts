/**
 * The only module that imports node:crypto (STYLE.md: heavy libraries behind one door).
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

/** SHA-256 over a 32-byte salt (hex) followed by the UTF-8 bytes of `text`, as lower-case hex. */
export function saltedSha256Hex(saltHex: string, text: string): string {
  const bytes = Buffer.allocUnsafe(32 + Buffer.byteLength(text, 'utf8'))
  bytes.write(saltHex, 0, 32, 'hex')
  bytes.write(text, 32, 'utf8')
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

/** A public JWK of the kinds COSE signatures here use: Ed25519 (RFC 8037) or P-256 (RFC 7518). */
export interface PublicJwk {
  kty: string
  crv?: string
  x?: string
  y?: string
}

/**
 * A verifier for a public JWK under a JOSE/COSE algorithm: `EdDSA` over an OKP Ed25519 key, `ES256`
 * over an EC P-256 key with the signature as r || s (RFC 9053 section 2.1, as in JWS). Throws
 * RangeError for a key of another kind or one node:crypto refuses.
 */
export function jwkVerifier(
  jwk: PublicJwk,
  algorithm: 'EdDSA' | 'ES256',
): (message: Uint8Array, signature: Uint8Array) => boolean {
  const fits =
    algorithm === 'EdDSA'
      ? jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string'
      : jwk.kty === 'EC' && jwk.crv === 'P-256' && typeof jwk.x === 'string' && typeof jwk.y === 'string'
  if (!fits) throw new RangeError(`the key (kty ${jwk.kty}, crv ${jwk.crv}) is not one for ${algorithm}`)
  let key: nodeCrypto.KeyObject
  try {
    key = nodeCrypto.createPublicKey({key: {kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y}, format: 'jwk'})
  } catch (error) {
    throw new RangeError(`not a usable ${algorithm} public key: ${(error as Error).message}`, {cause: error})
  }
  if (algorithm === 'EdDSA')
    return (message, signature) => signature.length === 64 && nodeCrypto.verify(null, message, key, signature)
  return (message, signature) =>
    signature.length === 64 && nodeCrypto.verify('sha256', message, {key, dsaEncoding: 'ieee-p1363'}, signature)
}
