/**
 * The stored event row, declared once: every member a stored event carries (core/event/fields.ts)
 * with how the stores keep it. Each store generates from this table its column list, its insert and
 * the read that gives a row back as one JSON array, which `toEvent` decodes by the table's names.
 *
 * The order is the order of that array and of a decoded event's keys (types.ts). It is also the
 * order of the arrays PostgreSQL keeps in `verbatim` (postgres/schema.ts), so a change of order
 * needs a migration that rewrites them. A new member is one line here, optional (events stored
 * before it have none), plus a PostgreSQL migration `ADD COLUMN IF NOT EXISTS` (a new database has
 * it from its first migration, which this table writes); a data directory adds it on open.
 */
import {STORED_FIELDS} from '../core/event/fields.js'
import type {EventHeader, Json, StoredEvent} from '../core/types.js'
import {digestsHex, digestsOfHex} from './digests.js'

/**
 * How a value is kept. SQLite: text TEXT, integer INTEGER, real REAL, json TEXT (JSON text), hash a
 * 32-byte BLOB, time INTEGER milliseconds (schema 2 and 3), digests a BLOB (digests.ts, schema 5).
 * PostgreSQL: text, bigint, double precision, jsonb, text for hashes and times, and bytea for
 * digests (schema 11).
 */
export type ColumnKind = 'text' | 'integer' | 'real' | 'json' | 'hash' | 'time' | 'digests'

export interface RowField {
  readonly name: (typeof STORED_FIELDS)[number]
  readonly kind: ColumnKind
  /** Present on every event (NOT NULL); an optional member is NULL when absent. */
  readonly required: boolean
  /** The row's key (`index`) or a unique column (`id`). */
  readonly key?: 'primary' | 'unique'
  /** A member of EventHeader (types.ts): what scans for policies and aggregates read. */
  readonly header?: boolean
  /** Searched by GET /v1/search (docs/api.md), in this order. */
  readonly searched?: boolean
  /** Compared whole by a filter (GET /v1/events): PostgreSQL leaves out a value it cannot hold exactly. */
  readonly filtered?: boolean
}

export const EVENT_ROW: readonly RowField[] = [
  {name: 'id', kind: 'text', required: true, key: 'unique', header: true},
  {name: 'agent_id', kind: 'text', required: true, header: true, searched: true},
  {name: 'action_type', kind: 'text', required: true, header: true, searched: true},
  {name: 'action_name', kind: 'text', required: true, header: true, searched: true},
  {name: 'action_status', kind: 'text', required: true, header: true, searched: true},
  {name: 'timestamp', kind: 'time', required: true, header: true},
  {name: 'labels', kind: 'json', required: true, header: true, searched: true, filtered: true},
  {name: 'session_id', kind: 'text', required: false, filtered: true},
  {name: 'trace_id', kind: 'text', required: false, filtered: true},
  {name: 'span_id', kind: 'text', required: false},
  {name: 'parent_id', kind: 'text', required: false},
  {name: 'input', kind: 'json', required: false, searched: true},
  {name: 'output', kind: 'json', required: false, searched: true},
  {name: 'metadata', kind: 'json', required: false, searched: true},
  {name: 'error', kind: 'text', required: false, searched: true},
  {name: 'duration_ms', kind: 'real', required: false},
  {name: 'signature', kind: 'text', required: false},
  {name: 'salts', kind: 'digests', required: false},
  {name: 'commitments', kind: 'digests', required: false},
  {name: 'erased', kind: 'json', required: false},
  {name: 'sequence', kind: 'integer', required: true, header: true},
  {name: 'prev_hash', kind: 'hash', required: true},
  {name: 'recorded_at', kind: 'time', required: true},
  {name: 'hash', kind: 'hash', required: true},
  {name: 'index', kind: 'integer', required: true, key: 'primary', header: true},
]

// `index` closes the row, so a row's text gives its index without being parsed (indexOfRowText).
if (EVENT_ROW.at(-1)!.name !== 'index') throw new Error('EVENT_ROW must end with index')

/** The index of a row's JSON array text, read from its end: the last member, an integer. */
export const indexOfRowText = (text: string): number => Number(text.slice(text.lastIndexOf(',') + 1, -1))

/** The header's fields, in the table's order: the array of a header row. */
export const HEADER_FIELDS: readonly RowField[] = EVENT_ROW.filter((field) => field.header)
/** The searched fields, in the table's order: the text columns of the search index. */
export const SEARCHED_FIELDS: readonly RowField[] = EVENT_ROW.filter((field) => field.searched)

/** The digests fields (salts, commitments): what the stores keep in binary form (digests.ts). */
export const DIGESTS_FIELDS: readonly RowField[] = EVENT_ROW.filter((field) => field.kind === 'digests')

/** A column's name in SQL: every field quoted, since `index` and `timestamp` are keywords. */
export const sqlName = (name: string): string => `"${name}"`

/** A column's definition in CREATE TABLE and ALTER TABLE ... ADD COLUMN, given a dialect's types. */
export function columnDefinition(field: RowField, types: Readonly<Record<ColumnKind, string>>): string {
  const constraint =
    field.key === 'primary'
      ? ' PRIMARY KEY'
      : field.key === 'unique'
        ? ' NOT NULL UNIQUE'
        : field.required
          ? ' NOT NULL'
          : ''
  return `${sqlName(field.name)} ${types[field.kind]}${constraint}`
}

/** A JSON column's text (a payload member, labels, erasures); NULL when absent. */
export const jsonText = (value: Json | object | undefined): string | null =>
  value === undefined ? null : JSON.stringify(value)

/**
 * A digests column's value as the stores bind it: the stored form as hex (digests.ts), or the JSON
 * text of a value of another shape, kept as it is; null when absent.
 */
export function digestsValue(value: unknown): string | null {
  if (value === undefined) return null
  return digestsHex(value) ?? jsonText(value)
}

/** Whether a digests column's bound value is the stored form (hex) rather than JSON text kept as it is. */
export const isDigestsHex = (value: string): boolean => digestsOfHex(value) !== undefined

/**
 * The event's values in the table's order, JSON members as their text, digests as digestsValue
 * gives them and absent members as null: what each store's insert takes before its own encoding of
 * hashes, times and digests.
 */
export function rowValues(event: StoredEvent): (string | number | null)[] {
  const values: (string | number | null)[] = []
  for (const field of EVENT_ROW) {
    const value = event[field.name]
    values.push(
      field.kind === 'json'
        ? jsonText(value as Json | undefined)
        : field.kind === 'digests'
          ? digestsValue(value)
          : ((value as string | number | undefined) ?? null),
    )
  }
  return values
}

/** A digests column as read (the stored form's hex, or JSON text kept as it was) as its object. */
export function parseDigestsColumn(text: unknown): unknown {
  if (typeof text !== 'string') return text
  return digestsOfHex(text) ?? parseJsonColumn(text)
}

/**
 * Parses a JSON column. A value that is not JSON (only after someone edited the file) is returned
 * as the text itself, so that verification reports a hash mismatch instead of the read failing.
 */
export function parseJsonColumn(text: unknown): unknown {
  if (typeof text !== 'string') return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

// The table's columns as plain arrays: the decoder reads every row of every scan.
const NAMES = EVENT_ROW.map((field) => field.name)
const IS_JSON = EVENT_ROW.map((field) => field.kind === 'json')
const IS_DIGESTS = EVENT_ROW.map((field) => field.kind === 'digests')
const REQUIRED = EVENT_ROW.map((field) => field.required)

/**
 * A row array (the table's order, JSON members as text, digests as the hex of their stored form) as
 * a StoredEvent; NULL members are absent.
 */
export function rowEvent(row: readonly unknown[]): StoredEvent {
  const event: Record<string, unknown> = {}
  for (let i = 0; i < NAMES.length; i++) {
    const value = row[i] ?? null
    if (value === null && !REQUIRED[i]) continue
    event[NAMES[i]!] = IS_JSON[i] ? parseJsonColumn(value) : IS_DIGESTS[i] ? parseDigestsColumn(value) : value
  }
  return event as unknown as StoredEvent
}

/** A row as one JSON array text, as both stores read it, decoded (rowEvent). */
export const toEvent = (rowJson: string): StoredEvent => rowEvent(JSON.parse(rowJson) as unknown[])

/** A header row array (HEADER_FIELDS' order; labels as JSON, or as text when it is not JSON) as an EventHeader. */
export function rowHeader(row: readonly unknown[]): EventHeader {
  const header: Record<string, unknown> = {}
  for (let i = 0; i < HEADER_FIELDS.length; i++) header[HEADER_FIELDS[i]!.name] = row[i]
  return header as unknown as EventHeader
}

/** A header row as one JSON array text, decoded (rowHeader). */
export const toHeader = (rowJson: string): EventHeader => rowHeader(JSON.parse(rowJson) as unknown[])

/** The header of a stored event, in HEADER_FIELDS' order. */
export function headerOf(event: StoredEvent): EventHeader {
  const header: Record<string, unknown> = {}
  for (const field of HEADER_FIELDS) header[field.name] = event[field.name]
  return header as unknown as EventHeader
}
