/**
 * Event matchers of policy rules (docs/api.md, Policy): `{agent_id?, action_type?,
 * action_name?, action_status?, labels?}`; every given field must match. String values are
 * anchored globs where `*` stands for any run of characters (also none) and every other
 * character is literal, so `pii.*` matches `pii.customers` but not `xpii.a`.
 */
import type {EventHeader} from '../types.js'
import {isObject, joinPath, reportUnknownKeys, type Report} from './problems.js'

export interface Matcher {
  agent_id?: string
  action_type?: string
  action_name?: string
  action_status?: string
  /** Label key (exact) to value glob; the event must carry every key. */
  labels?: Record<string, string>
}

export type EventTest = (event: EventHeader) => boolean

const STRING_FIELDS = ['agent_id', 'action_type', 'action_name', 'action_status'] as const
const MATCHER_FIELDS = [...STRING_FIELDS, 'labels'] as const
/** Label keys as docs/api.md allows them: a key no event can carry is a typo worth a 400. */
const LABEL_KEY = /^[A-Za-z0-9_.:-]{1,64}$/

/** Validates a matcher object; reports problems under `path` and returns undefined when invalid. */
export function parseMatcher(value: unknown, path: string, report: Report): Matcher | undefined {
  if (!isObject(value)) {
    report(path, 'must be a matcher object with agent_id, action_type, action_name, action_status or labels')
    return undefined
  }
  let failed = false
  const note: Report = (field, message) => {
    failed = true
    report(field, message)
  }
  reportUnknownKeys(value, MATCHER_FIELDS, path, note)
  const matcher: Matcher = {}
  for (const field of STRING_FIELDS) {
    const pattern = value[field]
    if (pattern === undefined) continue
    if (typeof pattern !== 'string' || pattern === '')
      note(joinPath(path, field), 'must be a non-empty string (`*` is a wildcard)')
    else matcher[field] = pattern
  }
  if (value.labels !== undefined) matcher.labels = parseLabelPatterns(value.labels, joinPath(path, 'labels'), note)
  return failed ? undefined : matcher
}

function parseLabelPatterns(value: unknown, path: string, report: Report): Record<string, string> {
  if (!isObject(value)) {
    report(path, 'must be an object of label key to value pattern')
    return {}
  }
  for (const [key, pattern] of Object.entries(value)) {
    if (!LABEL_KEY.test(key)) report(`${path}.${key}`, 'is not a valid label key (1..64 of A-Z a-z 0-9 _ . : -)')
    else if (typeof pattern !== 'string') report(`${path}.${key}`, 'must be a string (`*` is a wildcard)')
  }
  // fromEntries defines own properties, so even a key such as `__proto__` stays an ordinary label.
  return Object.fromEntries(Object.entries(value)) as Record<string, string>
}

/** Compiles a matcher into a test; an empty matcher matches every event. */
export function compileMatcher(matcher: Matcher): EventTest {
  const tests: EventTest[] = []
  for (const field of STRING_FIELDS) {
    const pattern = matcher[field]
    if (pattern !== undefined) tests.push(compileFieldTest(field, compileGlob(pattern)))
  }
  for (const [key, pattern] of Object.entries(matcher.labels ?? {})) {
    const matches = compileGlob(pattern)
    tests.push((event) => Object.hasOwn(event.labels, key) && matches(event.labels[key]!))
  }
  if (tests.length === 1) return tests[0]!
  return (event) => {
    for (const test of tests) if (!test(event)) return false
    return true
  }
}

/** One test per field with a fixed property access, which engines optimise better than `event[field]`. */
function compileFieldTest(field: (typeof STRING_FIELDS)[number], matches: (value: string) => boolean): EventTest {
  switch (field) {
    case 'agent_id':
      return (event) => matches(event.agent_id)
    case 'action_type':
      return (event) => matches(event.action_type)
    case 'action_name':
      return (event) => matches(event.action_name)
    case 'action_status':
      return (event) => matches(event.action_status)
  }
}

/**
 * Compiles an anchored `*` glob without regular expressions: the first segment must be a prefix,
 * the last a suffix, and the middle ones must occur in order between them. Taking the leftmost
 * occurrence of each middle segment is always optimal, so matching is linear per segment and a
 * hostile pattern such as `*a*a*a*b` cannot backtrack exponentially.
 */
export function compileGlob(pattern: string): (value: string) => boolean {
  if (!pattern.includes('*')) return (value) => value === pattern
  const parts = pattern.split('*')
  const head = parts[0]!
  const tail = parts[parts.length - 1]!
  const middle = parts.slice(1, -1).filter((part) => part !== '')
  const minLength = head.length + tail.length + middle.reduce((sum, part) => sum + part.length, 0)
  return (value) => {
    if (value.length < minLength || !value.startsWith(head) || !value.endsWith(tail)) return false
    const end = value.length - tail.length
    let at = head.length
    for (const part of middle) {
      const found = value.indexOf(part, at)
      if (found < 0 || found + part.length > end) return false
      at = found + part.length
    }
    return true
  }
}

/** `action_type=DATA_ACCESS, action_name=pii.*, labels.env=prod`, or `any event` for `{}`. */
export function describeMatcher(matcher: Matcher): string {
  const parts: string[] = []
  for (const field of STRING_FIELDS) if (matcher[field] !== undefined) parts.push(`${field}=${matcher[field]}`)
  for (const [key, pattern] of Object.entries(matcher.labels ?? {})) parts.push(`labels.${key}=${pattern}`)
  return parts.length === 0 ? 'any event' : parts.join(', ')
}
