/**
 * Readers for the scalar fields of an OTLP message in its JSON shape (OTLP specification,
 * "JSON Protobuf Encoding": the proto3 JSON mapping with lowerCamelCase keys, hex trace and span
 * ids, integer enums; 64-bit integers as decimal strings or numbers). The binary encoding is
 * brought to the same shape first (see src/services/otlp/protobuf.ts), except that its ids are
 * base64, so one set of rules checks both.
 *
 * proto3 JSON: `null` means the field is absent, so every reader answers the field's default for
 * it. A value of the wrong type makes the whole request bad data (HTTP 400 in the OTLP spec,
 * "Bad Data"), named by its path, e.g. `resourceSpans[0].scopeSpans[0].spans[3].traceId`.
 */
import {validationError} from '../errors.js'

/** How ids arrive: hex in OTLP/JSON, base64 after the binary form went through toObject. */
export type IdEncoding = 'hex' | 'base64'

const UINT64_MAX = (1n << 64n) - 1n
const INT64_MIN = -(1n << 63n)
const INT64_MAX = (1n << 63n) - 1n
const UNSIGNED = /^\d+$/
const SIGNED = /^-?\d+$/
const DECIMAL = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
const HEX = /^[0-9a-fA-F]*$/
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/

// String.prototype.toWellFormed is ES2024 (Node 20 has it); the project's lib is ES2022.
type WellFormed = {toWellFormed(): string}

/** Throws the validation_error for one field; the message is `<path> <problem>`. */
export function failField(path: string, problem: string): never {
  throw validationError([{field: path, message: problem}])
}

function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null
}

/** A message field: a JSON object, or undefined when absent. */
export function readObject(value: unknown, path: string): Record<string, unknown> | undefined {
  if (isAbsent(value)) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) failField(path, 'must be an object')
  return value as Record<string, unknown>
}

/** A repeated field: a JSON array, empty when absent. */
export function readList(value: unknown, path: string): unknown[] {
  if (isAbsent(value)) return []
  if (!Array.isArray(value)) failField(path, 'must be an array')
  return value
}

/**
 * A string field. Unpaired surrogates (possible in JSON text, not in UTF-8) become U+FFFD, as a
 * UTF-8 decoder does with invalid bytes: the event hash needs I-JSON text (RFC 7493 2.1).
 */
export function readString(value: unknown, path: string): string {
  if (isAbsent(value)) return ''
  if (typeof value !== 'string') failField(path, 'must be a string')
  return (value as unknown as WellFormed).toWellFormed()
}

export function readBool(value: unknown, path: string): boolean {
  if (isAbsent(value)) return false
  if (typeof value !== 'boolean') failField(path, 'must be a boolean')
  return value
}

function readInteger(value: unknown, path: string, pattern: RegExp, min: bigint, max: bigint): bigint {
  if (isAbsent(value)) return 0n
  let result: bigint | undefined
  if (typeof value === 'number' && Number.isInteger(value)) result = BigInt(value)
  if (typeof value === 'string' && pattern.test(value)) result = BigInt(value)
  if (result === undefined || result < min || result > max) {
    failField(path, `must be an integer from ${min} to ${max} (a number or a decimal string)`)
  }
  return result
}

/** `fixed64`/`uint64`, e.g. the `*_unix_nano` times. */
export function readUint64(value: unknown, path: string): bigint {
  return readInteger(value, path, UNSIGNED, 0n, UINT64_MAX)
}

/** `int64`, e.g. `AnyValue.int_value`. */
export function readInt64(value: unknown, path: string): bigint {
  return readInteger(value, path, SIGNED, INT64_MIN, INT64_MAX)
}

/** `double`: a number, a decimal string, or "NaN" / "Infinity" / "-Infinity" (proto3 JSON). */
export function readDouble(value: unknown, path: string): number {
  if (isAbsent(value)) return 0
  if (typeof value === 'number') return value
  if (typeof value === 'string') {
    if (value === 'NaN') return NaN
    if (value === 'Infinity') return Infinity
    if (value === '-Infinity') return -Infinity
    if (DECIMAL.test(value)) return Number(value)
  }
  return failField(path, 'must be a number')
}

/**
 * An enum: an integer (OTLP/JSON requires integers; unknown values are kept, as the spec asks).
 * The enum's name, e.g. "STATUS_CODE_ERROR", is tolerated too, since the proto3 JSON mapping
 * allows it and some hand-written senders use it.
 */
export function readEnum(value: unknown, path: string, names: readonly string[], prefix: string): number {
  if (isAbsent(value)) return 0
  if (typeof value === 'number' && Number.isInteger(value)) return value
  if (typeof value === 'string') {
    const index = names.findIndex((name) => prefix + name.toUpperCase() === value)
    if (index >= 0) return index
  }
  return failField(path, `must be an integer ${prefix}* value`)
}

/**
 * A trace or span id as lower-case hex, or '' when empty. trace.proto: "An ID with all zeroes OR
 * of length other than 16 [8] bytes is considered invalid"; a wrong length is refused here (as
 * the Collector does), an empty id is kept as absent, and all zeroes is kept as sent.
 */
export function readId(value: unknown, path: string, bytes: number, encoding: IdEncoding): string {
  const text = readString(value, path)
  if (text === '') return ''
  if (encoding === 'hex') {
    if (text.length !== bytes * 2 || !HEX.test(text))
      failField(path, `must be ${bytes * 2} hex digits (${bytes} bytes)`)
    return text.toLowerCase()
  }
  const raw = BASE64.test(text) ? Buffer.from(text, 'base64') : undefined
  if (raw === undefined || raw.length !== bytes) failField(path, `must be ${bytes} bytes`)
  return raw.toString('hex')
}

/** `bytes` in proto3 JSON: standard or URL-safe base64; answered in standard padded base64. */
export function readBytes(value: unknown, path: string): string {
  const text = readString(value, path)
  if (!BASE64.test(text)) failField(path, 'must be base64')
  return Buffer.from(text, 'base64').toString('base64')
}
