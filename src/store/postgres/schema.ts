/**
 * The PostgreSQL layout (docs/postgres.md): `events` with a column per stored field as in
 * events.sqlite (event-row.ts; JSON members as jsonb), chain heads and counts in `agents` and
 * `action_counts`, the log's size in the one-row `log_state` that every write locks FOR UPDATE (the
 * sequencer: commit order is index order, never a SEQUENCE, whose rollbacks leave gaps), and
 * `timestamps`; the Merkle tree as C2SP hash tiles in `merkle_tiles`, written with the events. Created and
 * upgraded by migrations.ts.
 */
import type {EventInput, Json, StoredEvent} from '../../core/types.js'
import {
  columnDefinition,
  EVENT_ROW,
  HEADER_FIELDS,
  isDigestsHex,
  rowValues,
  sqlName,
  type ColumnKind,
  type RowField,
} from '../event-row.js'
import {searchDocument} from './search-text.js'

const POSTGRES_TYPE: Readonly<Record<ColumnKind, string>> = {
  text: 'text',
  integer: 'bigint',
  real: 'double precision',
  json: 'jsonb',
  hash: 'text',
  time: 'text',
  digests: 'bytea',
}

/** The columns of `events` as its CREATE TABLE declares them (migrations.ts, schema 1). */
export const EVENT_COLUMN_DEFINITIONS = EVENT_ROW.map((field) => columnDefinition(field, POSTGRES_TYPE)).join(',\n  ')

/**
 * A column as the text of a JSON array's element: JSON members as their text and digests as the hex
 * of their stored form (digests.ts), like the sql.js store.
 */
const readValue = (field: RowField): string =>
  field.kind === 'json'
    ? `${sqlName(field.name)}::text`
    : field.kind === 'digests'
      ? `encode(${sqlName(field.name)}, 'hex')`
      : sqlName(field.name)

/**
 * A row as the JSON array text the sql.js store reads (schema.ts EVENT_JSON), so that toEvent and
 * the hashing thread decode both stores' rows alike. `verbatim` holds that text for the rare event
 * PostgreSQL cannot hold as it is (see eventColumns).
 */
export const EVENT_JSON = `coalesce(verbatim, json_build_array(${EVENT_ROW.map(readValue).join(', ')})::text)`
/** A header's columns, or for an event kept in `verbatim` (its columns are not exact) `E` and that row. */
export const HEADER_JSON = `coalesce('E' || verbatim, json_build_array(${HEADER_FIELDS.map((field) =>
  sqlName(field.name),
).join(', ')})::text)`

/** The columns of an insert, in this order, each sent as one array over the events (unnest). */
export const EVENT_COLUMNS: readonly (readonly [string, string])[] = [
  ...EVENT_ROW.map((field) => [field.name, field.kind === 'real' ? 'float8' : POSTGRES_TYPE[field.kind]] as const),
  ['verbatim', 'text'],
  ['search', 'tsvector'],
]

/** A column's value in SQL from its text (`from`): JSON and tsvector cast, digests decoded from hex. */
export function columnFromText(type: string, from: string): string {
  if (type === 'bytea') return `decode(${from}, 'hex')`
  return type === 'jsonb' || type === 'tsvector' ? `${from}::${type}` : from
}

const CAST_COLUMNS = EVENT_COLUMNS.map(([, type], i) => columnFromText(type, `c${i}`))
const ARRAY_PARAMETERS = EVENT_COLUMNS.map(
  ([, type], i) => `$${i + 1}::${type === 'jsonb' || type === 'tsvector' || type === 'bytea' ? 'text' : type}[]`,
)

export const INSERT_EVENTS = `INSERT INTO events (${EVENT_COLUMNS.map(([name]) => `"${name}"`).join(', ')})
  SELECT ${CAST_COLUMNS.join(', ')}
  FROM unnest(${ARRAY_PARAMETERS.join(', ')})
  AS u(${EVENT_COLUMNS.map((_, i) => `c${i}`).join(', ')})`

const NUL = '\u0000'

/** PostgreSQL text holds no U+0000: such a character reads as U+FFFD in the columns. */
function textColumn(value: string | undefined): string | null {
  if (value === undefined) return null
  return value.includes(NUL) ? value.replaceAll(NUL, '\uFFFD') : value
}

/** The escape \u0000 in JSON text, not the text `\u0000` in a string (written `\\u0000`). */
const ESCAPED_NUL = /(?<=(?:^|[^\\])(?:\\\\)*)\\u0000/g
const HAS_ESCAPED_NUL = new RegExp(ESCAPED_NUL.source)

/** JSON text for a jsonb column; jsonb holds no U+0000 either (escaped as \u0000 in JSON). */
function jsonColumn(text: string | null): string | null {
  return text !== null && text.includes('\\u0000') ? text.replace(ESCAPED_NUL, '\\ufffd') : text
}

/**
 * The column of a value that filters compare (session_id, trace_id, a label): left out when it holds
 * U+0000, so that no filter finds the event by a lookalike (docs/postgres.md); `verbatim` keeps it.
 */
function filteredColumn(value: string | undefined): string | null {
  return value === undefined || value.includes(NUL) ? null : value
}

function labelsColumn(labels: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).filter(([, value]) => !value.includes(NUL))))
}

/** A field's column, given its row value (rowValues: JSON members as their text). */
function columnValue(field: RowField, event: StoredEvent, value: string | number | null): string | number | null {
  if (field.kind === 'digests') return value !== null && isDigestsHex(value as string) ? value : null
  if (field.kind === 'json') return field.required ? labelsColumn(event.labels) : jsonColumn(value as string | null)
  if (field.kind !== 'text' || field.required) return value
  const text = (value ?? undefined) as string | undefined
  return field.filtered ? filteredColumn(text) : textColumn(text)
}

/**
 * Whether a row value holds U+0000: a character of a text, the escape in a JSON text (the look-behind
 * only where the plain search finds `\u0000`: it is run for every JSON member of every event).
 */
const valueHoldsNul = (field: RowField, value: string | number | null): boolean =>
  typeof value === 'string' &&
  (field.kind === 'json' ? value.includes('\\u0000') && HAS_ESCAPED_NUL.test(value) : value.includes(NUL))

/** Whether a row value is one the columns cannot hold: digests of another shape than bytea keeps. */
const valueNotHeld = (field: RowField, value: string | number | null): boolean =>
  field.kind === 'digests' && value !== null && !isDigestsHex(value as string)

/**
 * The insert's column values of one event. An event with a U+0000 anywhere, or digests of another
 * shape than their binary form (digests.ts), keeps its exact content in `verbatim` (the EVENT_JSON
 * text), which every read prefers, so that its hash verifies.
 */
export function eventColumns(event: StoredEvent, search?: string): (string | number | null)[] {
  const values = rowValues(event)
  const exact = !EVENT_ROW.some((field, i) => valueHoldsNul(field, values[i]!) || valueNotHeld(field, values[i]!))
  const columns = EVENT_ROW.map((field, i) => columnValue(field, event, values[i]!))
  columns.push(exact ? null : JSON.stringify(values), search ?? searchColumn(event, exact))
  return columns
}

/**
 * The `search` column of an event, from its content alone, so that a group commit makes it before
 * taking the log's lock (docs/scaling.md). Indexed as a read gives the event back, so that a phrase
 * across members is found as shown: in jsonb's member order, unless the event is kept in `verbatim`.
 */
export function searchColumn(event: EventInput, exact = !holdsNul(event)): string {
  return searchDocument(exact ? inJsonbOrder(event) : event)
}

/** Whether a member of the event holds U+0000 (then `verbatim` keeps it; see eventColumns). */
function holdsNul(event: EventInput): boolean {
  return EVENT_ROW.some((field) => {
    const value = (event as Partial<StoredEvent>)[field.name]
    if (value === undefined) return false
    return valueHoldsNul(field, field.kind === 'json' ? JSON.stringify(value) : (value as string | number))
  })
}

/** The value with its objects' keys in jsonb's order: the shorter in UTF-8 first, then by their bytes. */
function jsonbOrdered(value: Json): Json {
  if (Array.isArray(value)) return value.map(jsonbOrdered)
  if (value === null || typeof value !== 'object') return value
  const keys = Object.keys(value).map((key) => ({key, bytes: Buffer.from(key)}))
  keys.sort((a, b) => a.bytes.length - b.bytes.length || Buffer.compare(a.bytes, b.bytes))
  const ordered: Record<string, Json> = {}
  for (const {key} of keys) ordered[key] = jsonbOrdered(value[key]!)
  return ordered
}

/** The event with its JSON fields' members in the order jsonb keeps them (a read parses them in that order). */
function inJsonbOrder<T extends EventInput>(event: T): T {
  const ordered = {...event, labels: jsonbOrdered(event.labels) as Record<string, string>}
  if (event.input !== undefined) ordered.input = jsonbOrdered(event.input)
  if (event.output !== undefined) ordered.output = jsonbOrdered(event.output)
  if (event.metadata !== undefined) ordered.metadata = jsonbOrdered(event.metadata)
  return ordered
}
