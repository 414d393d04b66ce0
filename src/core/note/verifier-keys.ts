/**
 * Signed-note keys (C2SP signed-note v1.0.0, "Verifier keys"): a key name, a 32-bit key id and
 * the public key, written `<name>+<hex key id>+<base64(type || public key)>`.
 */
import {sha256} from '../crypto.js'

/** Signature type of an Ed25519 note signature (signed-note, "Signatures"). */
export const SIG_TYPE_ED25519 = 0x01
/** Signature type of an Ed25519 timestamped cosignature (C2SP tlog-cosignature v1.0.0). */
export const SIG_TYPE_COSIGNATURE_V1 = 0x04

interface VerifierKey {
  name: string
  keyId: number
  type: number
  publicKey: Buffer
}

/** A key name is non-empty UTF-8 with no Unicode space and no `+` (signed-note, "Signatures"). */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name) && !/[\p{Cc}\u2028\u2029]/u.test(name) && isWellFormed(name)
}

/** The key id: the first four bytes of SHA-256(name || 0x0A || type || public key), big-endian. */
export function keyId(name: string, type: number, publicKey: Uint8Array): number {
  return sha256(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.from([type]), publicKey])).readUInt32BE(0)
}

export function encodeVerifierKey(name: string, type: number, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw new Error(`invalid key name ${JSON.stringify(name)}`)
  const id = keyId(name, type, publicKey).toString(16).padStart(8, '0')
  return `${name}+${id}+${Buffer.concat([Buffer.from([type]), publicKey]).toString('base64')}`
}

/** Parses a vkey and checks that its key id is the one its name and key give. */
export function parseVerifierKey(vkey: string): VerifierKey {
  const match = /^([^+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(vkey.trim())
  if (!match || !isValidKeyName(match[1]!))
    throw new Error(`malformed verifier key ${JSON.stringify(vkey)} (expected <name>+<8 hex digits>+<base64>)`)
  const material = strictBase64(match[3]!)
  if (!material || material.length !== 33)
    throw new Error(`verifier key ${match[1]} does not hold a 32-byte Ed25519 key`)
  const type = material[0]!
  if (type !== SIG_TYPE_ED25519 && type !== SIG_TYPE_COSIGNATURE_V1)
    throw new Error(
      `verifier key ${match[1]} has the unsupported signature type 0x${type.toString(16).padStart(2, '0')}`,
    )
  const name = match[1]!
  const publicKey = material.subarray(1)
  const id = keyId(name, type, publicKey)
  if (id !== Number.parseInt(match[2]!, 16))
    throw new Error(
      `verifier key ${name}: key id ${match[2]} does not match its key (${id.toString(16).padStart(8, '0')})`,
    )
  return {name, keyId: id, type, publicKey}
}

/** A signer key of golang.org/x/mod/sumdb/note: `PRIVATE+KEY+<name>+<hex id>+<base64(0x01 || seed)>`. */
export function parseSignerKey(skey: string): {name: string; keyId: number; seed: Buffer} {
  const match = /^PRIVATE\+KEY\+([^+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(skey.trim())
  const material = match ? strictBase64(match[3]!) : undefined
  if (!match || !material || material.length !== 33 || material[0] !== SIG_TYPE_ED25519 || !isValidKeyName(match[1]!)) {
    throw new Error('malformed signer key (expected PRIVATE+KEY+<name>+<hex id>+<base64 Ed25519 seed>)')
  }
  return {name: match[1]!, keyId: Number.parseInt(match[2]!, 16), seed: material.subarray(1)}
}

/** Standard base64 (RFC 4648 section 4) in its one canonical form, else undefined. */
export function strictBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined
  const bytes = Buffer.from(text, 'base64')
  // Node ignores non-zero padding bits; re-encoding tells such an alias from the canonical text.
  return bytes.toString('base64') === text ? bytes : undefined
}

/** No lone UTF-16 surrogate: the string has a UTF-8 encoding (in `u` mode a pair is one code point). */
export function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDFFF]/u.test(text)
}
