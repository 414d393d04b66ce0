/**
 * RFC 8785 (JCS) canonical JSON of an event's hashed content (docs/verification.md 2), specialised for
 * speed: chain verification hashes every stored event, and the generic `canonicalize` package
 * (a Set of seen objects, arrays joined per object, a toJSON probe on every value) is several times
 * slower. The output is byte-identical to `canonicalize(content)` for every HashedContent, which
 * the tests check with property tests against the package; values that are not plain JSON
 * (possible only for programmatic callers) are handed to the package itself.
 *
 * Members outside the hashed form (`hash`, `index`, `salts`, `erased`, `redacted` of a stored event)
 * are ignored, so a stored event can be passed without copying it.
 */
import canonicalize from 'canonicalize'
import type {HashedContent} from '../types.js'
import {HASHED_FIELDS, PAYLOAD_MEMBERS} from './fields.js'
import {isWellFormedText} from './text.js'

/**
 * The members of HashedContent sorted by UTF-16 code units, the property order of RFC 8785
 * section 3.2.3. The names are ASCII without characters JSON escapes, so they need no escaping.
 */
const MEMBERS: ReadonlyArray<keyof HashedContent> = [...HASHED_FIELDS].sort()
const FIRST_PREFIX = MEMBERS.map((name) => `"${name}":`)
/** Which of MEMBERS are payload members: left out of the hashed form once committed (2.3). */
const IS_PAYLOAD = MEMBERS.map((name) => (PAYLOAD_MEMBERS as readonly string[]).includes(name))
const NEXT_PREFIX = MEMBERS.map((name) => `,"${name}":`)

// Quote, backslash and C0 controls are escaped by JSON; surrogates need the well-formedness check.
const NOT_VERBATIM = /[\u0000-\u001f"\\\ud800-\udfff]/

/**
 * RFC 8785 3.2.2.2: JSON.stringify escapes strings exactly as JCS asks once unpaired surrogates
 * (refused by I-JSON, RFC 7493 2.1) are excluded; most strings need no escape and are copied.
 */
function canonicalString(text: string): string {
  if (!NOT_VERBATIM.test(text)) return '"' + text + '"'
  if (!isWellFormedText(text)) throw new Error('Lone surrogate is not allowed')
  return JSON.stringify(text)
}

/**
 * RFC 8785 3.2.2.3: the ECMAScript Number::toString serialisation, which is what String() and
 * JSON.stringify give for a finite number (both write -0 as "0"); String() is the faster one.
 */
function canonicalNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error('Non-finite numbers are not allowed')
  return String(value)
}

/**
 * The canonical form of a plain JSON value, or undefined when it holds anything else (undefined,
 * a function, a class instance, a toJSON method), whose treatment is left to the package.
 * Object members are sorted by UTF-16 code units (RFC 8785 3.2.3), as Array.prototype.sort does.
 */
function canonicalJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return canonicalString(value)
    case 'number':
      return canonicalNumber(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object':
      if (value === null) return 'null'
      return Array.isArray(value) ? canonicalArray(value) : canonicalObject(value)
    default:
      return undefined
  }
}

function canonicalArray(items: readonly unknown[]): string | undefined {
  let out = '['
  for (let i = 0; i < items.length; i++) {
    const item = canonicalJson(items[i])
    if (item === undefined) return undefined
    out += (i === 0 ? '' : ',') + item
  }
  return out + ']'
}

function canonicalObject(value: object): string | undefined {
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return undefined
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).sort()
  let out = '{'
  for (let i = 0; i < keys.length; i++) {
    // Read through own keys only, so `__proto__` is an ordinary member.
    const member = canonicalJson(record[keys[i]])
    if (member === undefined) return undefined
    out += (i === 0 ? '' : ',') + canonicalString(keys[i]) + ':' + member
  }
  return out + '}'
}

/** The RFC 8785 canonical JSON text of any JSON value (a payload member's, for its commitment). */
export function canonicalizeValue(value: unknown): string {
  const text = canonicalJson(value) ?? canonicalize(value)
  if (text === undefined) throw new Error('the value cannot be canonicalised')
  return text
}

/**
 * The RFC 8785 canonical JSON text of an event's hashed form (docs/verification.md 2): absent
 * members are omitted, and so are the payload members of an event that has `commitments`.
 */
export function canonicalizeEvent(content: HashedContent): string {
  const record = content as unknown as Record<string, unknown>
  const committed = record.commitments !== undefined
  let out = '{'
  let first = true
  for (let i = 0; i < MEMBERS.length; i++) {
    const value = record[MEMBERS[i]]
    if (value === undefined || (committed && IS_PAYLOAD[i])) continue
    const text = canonicalJson(value) ?? canonicalize(value)
    if (text === undefined) throw new Error(`${MEMBERS[i]} cannot be canonicalised`)
    out += (first ? FIRST_PREFIX[i] : NEXT_PREFIX[i]) + text
    first = false
  }
  return out + '}'
}
