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
