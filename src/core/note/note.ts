/**
 * C2SP signed notes (signed-note v1.0.0): a UTF-8 text ending in a newline, a blank line, then
 * signature lines `— <key name> <base64(key id || signature)>`. Opening a note follows the spec
 * (and golang.org/x/mod/sumdb/note): signatures by unknown keys are ignored, one by a known key
 * that fails rejects the note, and a note with no verified signature is not opened.
 */
import {ed25519FromSeed, ed25519Verifier, type Ed25519Key} from '../crypto.js'
import {
  encodeVerifierKey,
  isValidKeyName,
  isWellFormed,
  keyId,
  parseVerifierKey,
  SIG_TYPE_ED25519,
  strictBase64,
} from './verifier-keys.js'
import {CodedError} from '../coded-error.js'

type NoteErrorCode = 'malformed' | 'invalid_signature' | 'unverified'

export class NoteError extends CodedError<NoteErrorCode> {
  override name = 'NoteError'
}

export interface NoteVerifier {
  readonly name: string
  readonly keyId: number
  verify(text: Uint8Array, signature: Uint8Array): boolean
}

export interface NoteSigner {
  readonly name: string
  readonly keyId: number
  sign(text: Uint8Array): Uint8Array
}

interface NoteSignature {
  name: string
  keyId: number
  /** The whole line, newline included, as it appears in the note. */
  line: string
}

interface OpenedNote {
  text: string
  verified: NoteSignature[]
  unverified: NoteSignature[]
}

/** The em dash (U+2014) and space that begin a signature line. */
const SIGNATURE_PREFIX = '\u2014 '
// golang.org/x/mod/sumdb/note refuses notes with more signatures than this.
const MAX_SIGNATURES = 100

/** An Ed25519 signer (type 0x01) for the key name `name`. */
export function ed25519NoteSigner(name: string, key: Ed25519Key): NoteSigner {
  if (!isValidKeyName(name)) throw new NoteError('malformed', `invalid key name ${JSON.stringify(name)}`)
  return {name, keyId: keyId(name, SIG_TYPE_ED25519, key.publicKey), sign: (text) => key.sign(text)}
}

export function ed25519NoteSignerFromSeed(name: string, seed: Uint8Array): NoteSigner {
  return ed25519NoteSigner(name, ed25519FromSeed(seed))
}

/** The vkey of an Ed25519 signer's public key under `name`. */
export function ed25519VerifierKey(name: string, publicKey: Uint8Array): string {
  return encodeVerifierKey(name, SIG_TYPE_ED25519, publicKey)
}

/** A verifier for an Ed25519 (type 0x01) vkey. */
export function ed25519NoteVerifier(vkey: string): NoteVerifier {
  const key = parseVerifierKey(vkey)
  if (key.type !== SIG_TYPE_ED25519)
    throw new NoteError('malformed', `verifier key ${key.name} is not an Ed25519 note key (type 0x01)`)
  const verify = ed25519Verifier(key.publicKey)
  return {name: key.name, keyId: key.keyId, verify}
}

/** A signature line over `text` by `signer`. */
export function signatureLine(text: string, signer: NoteSigner): string {
  const id = Buffer.alloc(4)
  id.writeUInt32BE(signer.keyId)
  const signature = signer.sign(Buffer.from(text, 'utf8'))
  return `${SIGNATURE_PREFIX}${signer.name} ${Buffer.concat([id, signature]).toString('base64')}\n`
}

/** The signed note: `text`, a blank line, one signature line per signer. */
export function signNote(text: string, signers: NoteSigner[]): string {
  checkText(text)
  return `${text}\n${signers.map((signer) => signatureLine(text, signer)).join('')}`
}

/**
 * Opens a signed note with the given verifiers. Throws NoteError: `malformed` for anything the
 * format does not allow, `invalid_signature` when a known key's signature fails, `unverified`
 * when no known key signed.
 */
export function openNote(message: string | Uint8Array, verifiers: readonly NoteVerifier[]): OpenedNote {
  const {text, signatures} = parseNote(message)
  const encoded = Buffer.from(text, 'utf8')
  const verified: NoteSignature[] = []
  const unverified: NoteSignature[] = []
  for (const {signature, bytes} of signatures) {
    const verifier = verifiers.find((v) => v.name === signature.name && v.keyId === signature.keyId)
    if (!verifier) {
      unverified.push(signature)
      continue
    }
    if (!verifier.verify(encoded, bytes))
      throw new NoteError(
        'invalid_signature',
        `the signature of ${signature.name} (key ${hexId(signature.keyId)}) does not verify`,
      )
    if (!verified.some((s) => s.name === signature.name && s.keyId === signature.keyId)) verified.push(signature)
  }
  if (verified.length === 0) throw new NoteError('unverified', 'no signature by a known key')
  return {text, verified, unverified}
}

/** Splits a signed note into its text and signature lines, checking the format only. */
export function parseNote(message: string | Uint8Array): {
  text: string
  signatures: Array<{signature: NoteSignature; bytes: Uint8Array}>
} {
  const note = typeof message === 'string' ? message : decodeUtf8(message)
  if (!isWellFormed(note)) throw new NoteError('malformed', 'the note is not valid UTF-8')
  const split = note.lastIndexOf('\n\n')
  if (split < 0) throw new NoteError('malformed', 'the note has no blank line before its signatures')
  const text = note.slice(0, split + 1)
  checkText(text)
  const lines = note.slice(split + 2)
  if (!lines.endsWith('\n')) throw new NoteError('malformed', 'the note does not end with a newline')
  const signatures = lines.slice(0, -1).split('\n').map(parseSignatureLine)
  if (signatures.length > MAX_SIGNATURES)
    throw new NoteError('malformed', `the note has more than ${MAX_SIGNATURES} signatures`)
  return {text, signatures}
}

/** One signature line (without its newline): `— <name> <base64(key id || signature)>`. */
export function parseSignatureLine(line: string): {signature: NoteSignature; bytes: Uint8Array} {
  const match = /^\u2014 (\S+) (\S+)$/u.exec(line)
  const decoded = match ? strictBase64(match[2]!) : undefined
  if (!match || !isValidKeyName(match[1]!) || !decoded || decoded.length < 5) {
    throw new NoteError('malformed', `malformed signature line ${JSON.stringify(line.slice(0, 80))}`)
  }
  return {signature: {name: match[1]!, keyId: decoded.readUInt32BE(0), line: `${line}\n`}, bytes: decoded.subarray(4)}
}

/** The text of a note: UTF-8 ending in a newline, no ASCII control character but newline. */
function checkText(text: string): void {
  if (!text.endsWith('\n')) throw new NoteError('malformed', 'the note text does not end with a newline')
  if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text))
    throw new NoteError('malformed', 'the note text holds a control character')
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', {fatal: true, ignoreBOM: true}).decode(bytes)
  } catch {
    throw new NoteError('malformed', 'the note is not valid UTF-8')
  }
}

function hexId(id: number): string {
  return id.toString(16).padStart(8, '0')
}
