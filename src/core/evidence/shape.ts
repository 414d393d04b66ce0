/**
 * The form of an evidence package (docs/verification.md 1 and 4): the members a verifier reads,
 * each of its type, checked before anything reads them.
 */
import {STORED_FIELDS} from '../event/index.js'
import {FILTER_MEMBERS} from '../query-params.js'
import {AGENT_PATTERN} from '../trail/name.js'
import type {StoredEvent} from '../types.js'
import {fail} from './failures.js'
import {isTaggedPackage} from './package.js'
import {PACKAGE_FORMAT, type EvidencePackage} from './types.js'

const HEX64 = /^[0-9a-f]{64}$/
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
const MERKLE_ALGORITHM = 'rfc9162-sha256'
const FILTER_NAMES = Object.keys(FILTER_MEMBERS) as Array<keyof typeof FILTER_MEMBERS>
const TEXT_FILTERS = FILTER_NAMES.filter((name) => FILTER_MEMBERS[name] === 'text')
const TIME_FILTERS = FILTER_NAMES.filter((name) => FILTER_MEMBERS[name] === 'time')
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

export function checkShape(pkg: EvidencePackage): void {
  const ok =
    isTaggedPackage(pkg) &&
    pkg.merkle &&
    typeof pkg.merkle.root === 'string' &&
    HEX64.test(pkg.merkle.root) &&
    Number.isSafeInteger(pkg.merkle.tree_size) &&
    pkg.proofs &&
    typeof pkg.proofs === 'object' &&
    pkg.chains &&
    typeof pkg.chains === 'object'
  if (!ok)
    fail({
      check: 'format',
      message: `not an ${PACKAGE_FORMAT} version 1 or 2 document with events, merkle, chains and proofs`,
    })
  // The members docs/verification.md fixes: a reader must not be told "rfc9162-sha256" was checked
  // when the package says otherwise, nor shown a time or a timestamp member that is not there.
  if (pkg.merkle.algorithm !== MERKLE_ALGORITHM) {
    const given = Object.hasOwn(pkg.merkle, 'algorithm') ? `is ${JSON.stringify(pkg.merkle.algorithm)}` : 'is missing'
    fail({
      check: 'format',
      message: `merkle.algorithm ${given}; this verifier checks ${MERKLE_ALGORITHM} only`,
      expected: MERKLE_ALGORITHM,
      actual: String(pkg.merkle.algorithm),
    })
  }
  if (typeof pkg.generated_at !== 'string' || Number.isNaN(Date.parse(pkg.generated_at)))
    fail({check: 'format', message: 'generated_at is not a time'})
  if (
    !Object.hasOwn(pkg, 'timestamp') ||
    (pkg.timestamp !== null && (typeof pkg.timestamp !== 'object' || Array.isArray(pkg.timestamp)))
  ) {
    fail({check: 'format', message: 'timestamp must be null or a timestamp object'})
  }
  if (pkg.timestamp !== null) checkTimestampShape(pkg.timestamp)
  checkFilterShape(pkg.filters)
}

/** The members of a timestamp record (docs/verification.md), each of its type: the first one that is not is named. */
function checkTimestampShape(timestamp: object): void {
  const ts = timestamp as Record<string, unknown>
  const members: Array<[string, string, (value: unknown) => boolean]> = [
    ['token', 'a DER token in base64', (v) => typeof v === 'string' && v.length % 4 === 0 && BASE64.test(v)],
    ['merkle_root', '64 hex digits', (v) => typeof v === 'string' && HEX64.test(v)],
    ['tree_size', 'a whole number', (v) => Number.isSafeInteger(v) && (v as number) >= 0],
    ['timestamp', 'a time', (v) => typeof v === 'string' && !Number.isNaN(Date.parse(v))],
    ['tsa', 'a name', (v) => typeof v === 'string'],
    [
      'consistency_proof',
      'a list of hashes of 64 hex digits',
      (v) => Array.isArray(v) && v.every((hash) => typeof hash === 'string' && HEX64.test(hash)),
    ],
  ]
  for (const [name, what, holds] of members) {
    if (!holds(ts[name])) {
      fail({
        check: 'format',
        message: `timestamp.${name} is ${Object.hasOwn(ts, name) ? 'not ' + what : 'missing'}`,
        expected: what,
        actual: JSON.stringify(ts[name] ?? null).slice(0, 80),
      })
    }
  }
}

/** `filters` is a selection export writes: the members of EventFilter, each of its type. */
function checkFilterShape(filters: unknown): void {
  const ok =
    isPlainObject(filters) &&
    Object.keys(filters).every((key) => Object.hasOwn(FILTER_MEMBERS, key)) &&
    TEXT_FILTERS.every((key) => filters[key] === undefined || typeof filters[key] === 'string') &&
    TIME_FILTERS.every(
      (key) =>
        filters[key] === undefined ||
        (typeof filters[key] === 'string' && !Number.isNaN(Date.parse(filters[key] as string))),
    ) &&
    (filters.labels === undefined ||
      (isPlainObject(filters.labels) && Object.values(filters.labels).every((value) => typeof value === 'string'))) &&
    (filters.agents === undefined ||
      (Array.isArray(filters.agents) &&
        filters.agents.length > 0 &&
        filters.agents.every((pattern) => typeof pattern === 'string' && AGENT_PATTERN.test(pattern))))
  const message = `filters is not a selection of ${FILTER_NAMES.slice(0, -1).join(', ')} and ${FILTER_NAMES.at(-1)}`
  if (!ok) fail({check: 'format', message, actual: JSON.stringify(filters ?? null)})
}

/** Every member a stored event in a package may have; anything else is not covered by the hash. */
const EVENT_MEMBERS: ReadonlySet<string> = new Set([...STORED_FIELDS, 'redacted'])

export function isEventShaped(event: StoredEvent): boolean {
  return (
    event !== null &&
    typeof event === 'object' &&
    Object.keys(event).every((key) => EVENT_MEMBERS.has(key)) &&
    typeof event.id === 'string' &&
    typeof event.agent_id === 'string' &&
    typeof event.hash === 'string' &&
    HEX64.test(event.hash) &&
    typeof event.prev_hash === 'string' &&
    Number.isSafeInteger(event.index) &&
    event.index >= 0 &&
    Number.isSafeInteger(event.sequence)
  )
}
