/**
 * RFC 8785 (JCS) canonical JSON of an event's hashed content (CONTRACT.md 2.3), specialised for
 * speed: chain verification hashes every stored event, and the generic `canonicalize` package
 * (sorting keys and recursing for every event) is several times slower than this. The output is
 * byte-identical to `canonicalize(content)` for every HashedContent, which the tests check with
 * property tests against the package.
 *
 * Members outside HashedContent (such as `hash` and `index` of a StoredEvent) are not part of the
 * hashed content and are ignored, so a stored event can be passed without copying it.
 */
import canonicalize from 'canonicalize'
import type {HashedContent} from '../types.js'
import {isWellFormedText} from './text.js'

/**
 * The members of HashedContent sorted by UTF-16 code units, the property order of RFC 8785
 * section 3.2.3. Each entry is the member's canonical `"name":` prefix; the names are ASCII
 * without characters that JSON escapes, so they need no escaping.
 */
const MEMBERS: ReadonlyArray<readonly [keyof HashedContent, string]> = (
  [
    'id', 'agent_id', 'action_type', 'action_name', 'action_status', 'timestamp', 'labels',
    'session_id', 'trace_id', 'span_id', 'parent_id', 'input', 'output', 'metadata', 'error',
    'duration_ms', 'sequence', 'prev_hash', 'recorded_at',
  ] as const
)
  .slice()
  .sort()
  .map((name) => [name, `"${name}":`] as const)

/**
 * One value in canonical form. Strings: JSON.stringify escapes exactly as RFC 8785 3.2.2.2 asks
 * once unpaired surrogates are excluded. Numbers: JSON.stringify of a finite number is the
 * ECMAScript Number serialisation RFC 8785 3.2.2.3 prescribes. Anything else goes to the package.
 */
function canonicalScalar(value: unknown): string | undefined {
  if (typeof value === 'string') {
    if (!isWellFormedText(value)) throw new Error('Lone surrogate is not allowed')
    return JSON.stringify(value)
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('Non-finite numbers are not allowed')
    return JSON.stringify(value)
  }
  return undefined
}

/** Labels: a flat object of strings, members sorted by UTF-16 code units (RFC 8785 3.2.3). */
function canonicalLabels(labels: object): string {
  const record = labels as Record<string, unknown>
  const keys = Object.keys(record).sort()
  let out = '{'
  for (let i = 0; i < keys.length; i++) {
    const value = record[keys[i]]
    // Not a flat object of strings (never after validation): let the package decide.
    if (typeof value !== 'string') return canonicalize(labels) as string
    out += (i === 0 ? '' : ',') + canonicalScalar(keys[i]) + ':' + canonicalScalar(value)
  }
  return out + '}'
}

function canonicalMember(name: keyof HashedContent, value: unknown): string {
  const scalar = canonicalScalar(value)
  if (scalar !== undefined) return scalar
  if (name === 'labels' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return canonicalLabels(value)
  }
  // input, output, metadata (any JSON value), and null or odd values of the other members.
  const text = canonicalize(value)
  if (text === undefined) throw new Error(`${name} cannot be canonicalised`)
  return text
}

/** The RFC 8785 canonical JSON text of an event's hashed content; absent members are omitted. */
export function canonicalizeEvent(content: HashedContent): string {
  const record = content as unknown as Record<string, unknown>
  let out = '{'
  for (const [name, prefix] of MEMBERS) {
    const value = record[name]
    if (value === undefined) continue
    out += (out.length === 1 ? '' : ',') + prefix + canonicalMember(name, value)
  }
  return out + '}'
}
