/**
 * COSE_Sign1 (RFC 9052 section 4.2): four CBOR items, `[protected: bstr .cbor header_map,
 * unprotected: header_map, payload: bstr / nil, signature: bstr]`, tagged 18. The signature is
 * over the Sig_structure of section 4.4. Signing and verifying are injected functions, so this
 * module holds no key and touches no crypto library.
 */
import {decodeCbor, encodeCbor, isTag, tagged} from './cbor.js'
import {CoseError} from './errors.js'

/** Header labels (RFC 9052 section 3.1; RFC 9597; RFC 9942 section 2). */
export const HEADER = {
  alg: 1,
  crit: 2,
  contentType: 3,
  kid: 4,
  cwtClaims: 15,
  receipts: 394,
  vds: 395,
  vdp: 396,
} as const

/** Algorithms (RFC 9053 section 2): EdDSA and ECDSA with SHA-256 on P-256. */
export const ALG = {EdDSA: -8, ES256: -7} as const

export const COSE_SIGN1_TAG = 18

type HeaderMap = Map<unknown, unknown>

export interface Sign1 {
  /** The protected header's bytes as signed (decoding and encoding again need not give them back). */
  protectedBytes: Uint8Array
  protectedHeader: HeaderMap
  unprotectedHeader: HeaderMap
  /** null: detached (RFC 9052 section 2). */
  payload: Uint8Array | null
  signature: Uint8Array
}

const EMPTY = new Uint8Array(0)

/** Sig_structure for COSE_Sign1 (RFC 9052 section 4.4): ["Signature1", protected, external_aad, payload]. */
export function sigStructure(protectedBytes: Uint8Array, payload: Uint8Array, externalAad: Uint8Array = EMPTY) {
  return encodeCbor(['Signature1', protectedBytes, externalAad, payload])
}

/** The protected header as a bstr: empty for an empty map (RFC 9052 section 3). */
function encodeProtected(header: HeaderMap): Uint8Array {
  return header.size === 0 ? EMPTY : encodeCbor(header)
}

/** Signs and encodes a tagged COSE_Sign1; with `detached` the payload is signed but sent as nil. */
export function signSign1(
  options: {protectedHeader: HeaderMap; unprotectedHeader?: HeaderMap; payload: Uint8Array; detached?: boolean},
  sign: (toBeSigned: Uint8Array) => Uint8Array,
): Uint8Array {
  const protectedBytes = encodeProtected(options.protectedHeader)
  const signature = sign(sigStructure(protectedBytes, options.payload))
  return encodeSign1({
    protectedBytes,
    protectedHeader: options.protectedHeader,
    unprotectedHeader: options.unprotectedHeader ?? new Map(),
    payload: options.detached ? null : options.payload,
    signature,
  })
}

/** The tagged encoding; the protected header goes out as the bytes it was signed as. */
export function encodeSign1(sign1: Sign1): Uint8Array {
  const {protectedBytes, unprotectedHeader, payload, signature} = sign1
  return encodeCbor(tagged(COSE_SIGN1_TAG, [protectedBytes, unprotectedHeader, payload, signature]))
}

/** A COSE_Sign1, tagged 18 or untagged (RFC 9052 section 2), from untrusted bytes. */
export function decodeSign1(bytes: Uint8Array): Sign1 {
  let item = decodeCbor(bytes)
  if (isTag(item, COSE_SIGN1_TAG)) item = item.contents
  else if (typeof item === 'object' && item !== null && 'tag' in item)
    throw new CoseError('malformed', `a CBOR tag ${String((item as {tag: unknown}).tag)}, not a COSE_Sign1 (tag 18)`)
  if (!Array.isArray(item) || item.length !== 4)
    throw new CoseError('malformed', 'not a COSE_Sign1: expected an array of four items')
  const [protectedBytes, unprotectedHeader, payload, signature] = item as unknown[]
  if (!(protectedBytes instanceof Uint8Array))
    throw new CoseError('malformed', 'the protected header is not a byte string')
  if (!(unprotectedHeader instanceof Map)) throw new CoseError('malformed', 'the unprotected header is not a map')
  if (payload !== null && !(payload instanceof Uint8Array))
    throw new CoseError('malformed', 'the payload is neither a byte string nor nil')
  if (!(signature instanceof Uint8Array)) throw new CoseError('malformed', 'the signature is not a byte string')
  return {protectedBytes, protectedHeader: decodeProtected(protectedBytes), unprotectedHeader, payload, signature}
}

function decodeProtected(bytes: Uint8Array): HeaderMap {
  if (bytes.length === 0) return new Map()
  let header: unknown
  try {
    header = decodeCbor(bytes)
  } catch (error) {
    throw new CoseError('malformed', `the protected header is ${(error as Error).message}`, {cause: error})
  }
  if (!(header instanceof Map)) throw new CoseError('malformed', 'the protected header is not a CBOR map')
  return header
}

/**
 * Whether the signature verifies over the Sig_structure; `detachedPayload` stands in for a nil
 * payload (a receipt's root, RFC 9942 section 3.2), and is refused beside an attached one.
 */
export function verifySign1(
  sign1: Sign1,
  verify: (toBeSigned: Uint8Array, signature: Uint8Array) => boolean,
  detachedPayload?: Uint8Array,
): boolean {
  if (sign1.payload !== null && detachedPayload !== undefined)
    throw new CoseError('malformed', 'the payload is attached where a detached one was expected')
  const payload = sign1.payload ?? detachedPayload
  if (payload === undefined) throw new CoseError('payload_missing', 'the payload is detached and none was given')
  return verify(sigStructure(sign1.protectedBytes, payload), sign1.signature)
}
