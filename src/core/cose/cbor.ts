/**
 * The one module that imports the CBOR library (cbor2). Everything signed is encoded in the core
 * deterministic encoding of RFC 8949 section 4.2.1 (preferred integers, definite lengths, map keys
 * in bytewise order of their encodings); untrusted input is decoded with maps as Map, duplicate
 * keys refused, nothing after the item.
 */
import {decode, encode, Tag} from 'cbor2'
import {CoseError} from './errors.js'

/** A CBOR tag as decoded: its number and its content. */
interface CborTag {
  readonly tag: number | bigint | object
  readonly contents: unknown
}

/**
 * A Buffer is a Uint8Array to CBOR (a byte string): cbor2 would otherwise encode it through its
 * toJSON as a map. Arrays, maps and tags are walked; other values pass as they are.
 */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array)
    return Buffer.isBuffer(value) ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : value
  if (Array.isArray(value)) return value.map(plain)
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [plain(k), plain(v)]))
  if (value instanceof Tag) return new Tag(value.tag, plain(value.contents))
  return value
}

/** RFC 8949 section 4.2.1 core deterministic encoding. */
export function encodeCbor(value: unknown): Uint8Array {
  return encode(plain(value), {cde: true})
}

export function tagged(tag: number, contents: unknown): CborTag {
  return new Tag(tag, contents)
}

export function isTag(value: unknown, tag: number): value is CborTag {
  return value instanceof Tag && Number(value.tag) === tag
}

/** One CBOR data item from untrusted bytes; a CoseError malformed says what is wrong with them. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new CoseError('malformed', 'no CBOR data item: the input is empty')
  try {
    // Maps always as Map (COSE labels are integers); no library-registered tag conversions.
    return decode(bytes, {preferMap: true, rejectDuplicateKeys: true, ignoreGlobalTags: true, maxDepth: 64})
  } catch (error) {
    throw new CoseError('malformed', `not well-formed CBOR: ${(error as Error).message}`, {cause: error})
  }
}

/**
 * The head of a data item (RFC 8949 section 3.1) in preferred serialization (section 4.2.1: the
 * shortest argument): major type `major` (0 uint, 2 bstr, 4 array, 5 map), argument `value` up to
 * 2^53 - 1. For receipts' per-leaf parts, which are heads and bytes only; tests hold it to cbor2.
 */
export function cborHead(major: number, value: number): Buffer {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`a CBOR argument is a uint, not ${value}`)
  const type = major << 5
  if (value < 24) return Buffer.from([type | value])
  if (value < 0x100) return Buffer.from([type | 24, value])
  if (value < 0x10000) return Buffer.from([type | 25, value >> 8, value & 0xff])
  const head = Buffer.alloc(value < 0x100000000 ? 5 : 9)
  head[0] = type | (head.length === 5 ? 26 : 27)
  if (head.length === 5) head.writeUInt32BE(value, 1)
  else head.writeBigUInt64BE(BigInt(value), 1)
  return head
}
