/**
 * C2SP tlog-cosignature v1.0.0, Ed25519 (signature type 0x04): a note signature whose bytes are
 * `u64 timestamp || Ed25519 signature` over `cosignature/v1\ntime <timestamp>\n` followed by the
 * checkpoint body. The ML-DSA-44 and subtree forms of later drafts are not part of v1.0.0.
 */
import {ed25519Verifier, type Ed25519Key} from '../crypto.js'
import {
  encodeVerifierKey,
  isValidKeyName,
  keyId,
  parseVerifierKey,
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
} from '../note/verifier-keys.js'
import {ed25519NoteVerifier, NoteError, type NoteSigner, type NoteVerifier} from '../note/note.js'

const MAX_TIMESTAMP = 2n ** 63n - 1n

function cosignedMessage(body: string, time: number): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${time}\n${body}`, 'utf8')
}

export interface CosignatureSigner extends NoteSigner {
  readonly publicKey: Buffer
}

/** A witness's signer; `now` gives the POSIX time in seconds to sign with. */
export function cosignatureSigner(
  name: string,
  key: Ed25519Key,
  now: () => number = () => Math.floor(Date.now() / 1000),
): CosignatureSigner {
  if (!isValidKeyName(name)) throw new NoteError('malformed', `invalid key name ${JSON.stringify(name)}`)
  return {
    name,
    publicKey: key.publicKey,
    keyId: keyId(name, SIG_TYPE_COSIGNATURE_V1, key.publicKey),
    sign(text) {
      const time = now()
      const stamp = Buffer.alloc(8)
      stamp.writeBigUInt64BE(BigInt(time))
      return Buffer.concat([stamp, key.sign(cosignedMessage(Buffer.from(text).toString('utf8'), time))])
    },
  }
}

export function cosignatureVerifierKey(name: string, publicKey: Uint8Array): string {
  return encodeVerifierKey(name, SIG_TYPE_COSIGNATURE_V1, publicKey)
}

/** A verifier for a cosignature (type 0x04) vkey. */
export function cosignatureVerifier(vkey: string): NoteVerifier {
  const key = parseVerifierKey(vkey)
  if (key.type !== SIG_TYPE_COSIGNATURE_V1)
    throw new NoteError('malformed', `verifier key ${key.name} is not a cosignature key (type 0x04)`)
  const verify = ed25519Verifier(key.publicKey)
  return {
    name: key.name,
    keyId: key.keyId,
    verify(text, signature) {
      if (signature.length !== 72) return false
      const time = Buffer.from(signature).readBigUInt64BE(0)
      if (time > MAX_TIMESTAMP) return false
      return verify(cosignedMessage(Buffer.from(text).toString('utf8'), Number(time)), signature.subarray(8))
    },
  }
}

/** A verifier for any vkey this project uses: a log key (0x01) or a witness key (0x04). */
export function noteVerifier(vkey: string): NoteVerifier {
  const key = parseVerifierKey(vkey)
  return key.type === SIG_TYPE_ED25519 ? ed25519NoteVerifier(vkey) : cosignatureVerifier(vkey)
}
