/**
 * The free-form JSON members of an event (`input`, `output`, `metadata`, docs/api.md): any JSON
 * value, as long as RFC 8785 can canonicalise it. Keys such as `__proto__` or `constructor` are
 * plain data: values are only read through own keys, never copied by assignment.
 */
import {isWellFormedText} from './text.js'

/**
 * Deeper values are refused so that canonicalising, storing and searching an accepted event can
 * never exhaust the call stack (RFC 7493 section 4 lets a protocol bound nesting).
 */
export const MAX_JSON_DEPTH = 256

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Appends a key to a JSONPath-like location for error messages. */
function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/**
 * Why a value cannot be hashed as JSON, or undefined when it can: I-JSON strings without unpaired
 * surrogates (RFC 7493 2.1, required by RFC 8785 3.1), finite numbers (RFC 8785 3.2.2.3), plain
 * objects and arrays, bounded depth. JSON.parse only yields such values except for surrogates;
 * the other checks protect programmatic callers (for example the OTLP receiver).
 */
export function checkJsonValue(value: unknown, path = '$', depth = 0): string | undefined {
  if (value === null || typeof value === 'boolean') return undefined
  if (typeof value === 'string') {
    return isWellFormedText(value) ? undefined : `contains an unpaired surrogate at ${path}`
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : `contains a non-finite number at ${path}`
  }
  if (typeof value !== 'object' || !(Array.isArray(value) || isPlainObject(value))) {
    return `contains a value that is not JSON at ${path}`
  }
  if (depth >= MAX_JSON_DEPTH) return `is nested deeper than ${MAX_JSON_DEPTH} levels at ${path}`
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = checkJsonValue(value[i], child(path, i), depth + 1)
      if (problem) return problem
    }
    return undefined
  }
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!isWellFormedText(key)) return `contains a key with an unpaired surrogate at ${path}`
    const problem = checkJsonValue(record[key], child(path, key), depth + 1)
    if (problem) return problem
  }
  return undefined
}

/**
 * Deep equality of two JSON values, ignoring key order (docs/api.md). Numbers compare with
 * `===`, so -0 equals 0 as it does in the JSON text both serialise to.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]))
  }
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = Object.keys(left)
  if (keys.length !== Object.keys(right).length) return false
  return keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]))
}

/**
 * About the length of a value's JSON text, walked without building it (what bounds a group
 * commit's journal line and statement). Strings count their UTF-16 length plus quotes.
 */
export function approximateJsonSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2
  if (value === null || typeof value !== 'object') return 8
  let size = 2
  if (Array.isArray(value)) {
    for (const item of value) size += approximateJsonSize(item) + 1
    return size
  }
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) size += key.length + 4 + approximateJsonSize(record[key])
  return size
}
