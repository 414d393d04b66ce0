/**
 * The PostgreSQL layout (docs/postgres.md): `events` with a column per stored field as in
 * events.sqlite (event-row.ts; JSON members as jsonb), chain heads and counts in `agents` and
 * `action_counts`, the log's size in the one-row `log_state` that every write locks FOR UPDATE (the
 * sequencer: commit order is index order, never a SEQUENCE, whose rollbacks leave gaps), and
 * `timestamps`; the Merkle tree as C2SP hash tiles in `merkle_tiles`, written with the events. Versioned by
 * `schema_version`; MIGRATIONS[v - 1] takes version v - 1 to v.
 */
import type {EventInput, Json, StoredEvent} from '../../core/types.js'
import {
  columnDefinition,
  EVENT_ROW,
  HEADER_FIELDS,
  rowValues,
  sqlName,
  type ColumnKind,
  type RowField,
} from '../event-row.js'
import {searchDocument} from './search-text.js'

export const SCHEMA_VERSION = 8

const POSTGRES_TYPE: Readonly<Record<ColumnKind, string>> = {
  text: 'text',
  integer: 'bigint',
  real: 'double precision',
  json: 'jsonb',
  hash: 'text',
  time: 'text',
}

/** The version from which `verbatim` arrays are in EVENT_ROW's order: older ones are rewritten (inVerbatimOrder). */
export const VERBATIM_ORDER_VERSION = 8

/** The order of the row arrays PostgreSQL kept in `verbatim` before schema 8 (shorter before schema 6). */
const VERBATIM_7_ORDER = `index id agent_id action_type action_name action_status timestamp labels session_id
  trace_id span_id parent_id input output metadata error duration_ms sequence prev_hash recorded_at hash signature
  salts commitments erased`.split(/\s+/)

/** A `verbatim` array text of schema 7 or older in EVENT_ROW's order (a member it lacks is null). */
export function inVerbatimOrder(text: string): string {
  const old = JSON.parse(text) as unknown[]
  return JSON.stringify(EVENT_ROW.map((field) => old[VERBATIM_7_ORDER.indexOf(field.name)] ?? null))
}

export const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE log_state (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  size bigint NOT NULL
);
INSERT INTO log_state (size) VALUES (0);
CREATE TABLE events (
  ${EVENT_ROW.map((field) => columnDefinition(field, POSTGRES_TYPE)).join(',\n  ')},
  verbatim text,
  search tsvector NOT NULL,
  UNIQUE (agent_id, sequence)
);
CREATE INDEX events_by_agent ON events (agent_id, "index");
CREATE INDEX events_by_action_type ON events (action_type, "index");
CREATE INDEX events_by_timestamp ON events ("timestamp");
CREATE INDEX events_by_recorded_at ON events (recorded_at);
CREATE INDEX events_by_trace ON events (trace_id, "index") WHERE trace_id IS NOT NULL;
CREATE INDEX events_by_session ON events (session_id, "index") WHERE session_id IS NOT NULL;
CREATE INDEX events_by_labels ON events USING gin (labels jsonb_path_ops);
CREATE INDEX events_by_text ON events USING gin (search);
CREATE TABLE agents (
  agent_id text PRIMARY KEY,
  event_count bigint NOT NULL,
  first_activity text NOT NULL,
  last_activity text NOT NULL,
  last_sequence bigint NOT NULL,
  head_hash text NOT NULL,
  last_recorded_at text NOT NULL
);
CREATE TABLE action_counts (
  field text NOT NULL,
  value text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (field, value)
);
CREATE TABLE embedded_tsa (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  ca_cert_pem text NOT NULL,
  tsa_cert_pem text NOT NULL,
  tsa_key_pem text NOT NULL
);
CREATE TABLE turns (
  name text PRIMARY KEY,
  taken_at timestamptz NOT NULL
);
CREATE TABLE timestamps (
  position bigserial PRIMARY KEY,
  merkle_root text NOT NULL,
  tree_size bigint NOT NULL,
  "timestamp" text NOT NULL,
  tsa text NOT NULL,
  token text NOT NULL,
  reset_reason text
);
`,
  // 2: C2SP checkpoints with their cosignatures, and the log's signing key (docs/checkpoints.md).
  `
CREATE TABLE checkpoints (
  position bigserial PRIMARY KEY,
  tree_size bigint NOT NULL,
  root text NOT NULL,
  note text NOT NULL,
  cosignatures jsonb NOT NULL,
  signed_at text NOT NULL
);
CREATE TABLE log_key (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  private_key_pem text NOT NULL
);
`,
  // 3: the Merkle tree's hash tiles (docs/postgres.md); the store fills them for existing events.
  `
CREATE TABLE merkle_tiles (
  level smallint NOT NULL,
  idx bigint NOT NULL,
  hashes bytea NOT NULL,
  PRIMARY KEY (level, idx)
);
`,
  // 4: `search` also holds pairs of adjacent tokens; the rows are rebuilt by the migration (postgres-store.ts).
  `COMMENT ON COLUMN events.search IS 'the searched tokens with their positions, and pairs of adjacent tokens'`,
  // 5: the CA certificates of every external TSA that issued a token for this log (docs/postgres.md,
  // "The log's identity"), so that the database alone verifies its timestamps.
  `
CREATE TABLE IF NOT EXISTS tsa_anchors (
  position bigserial PRIMARY KEY,
  pem text NOT NULL UNIQUE
);
`,
  // 6: payload commitments and agent signatures (docs/verification.md 2); NULL on older events.
  `ALTER TABLE events ADD COLUMN IF NOT EXISTS signature text, ADD COLUMN IF NOT EXISTS salts jsonb,
  ADD COLUMN IF NOT EXISTS commitments jsonb, ADD COLUMN IF NOT EXISTS erased jsonb`,
  // 7: erasures whose intent is durable and whose effect may not be yet (docs/erasure.md).
  `CREATE TABLE IF NOT EXISTS pending_erasures (
  id text PRIMARY KEY,
  intent jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`,
  // 8: `verbatim` arrays in the order of the declared row (event-row.ts), rewritten by the store
  // (VERBATIM_ORDER_VERSION).
  `COMMENT ON COLUMN events.verbatim IS
    'an event PostgreSQL cannot hold exactly, as its row array in the declared order'`,
]

/** The version whose migration creates merkle_tiles: a database migrated from below it gets its tiles built. */
export const TILES_VERSION = 3
/** The version whose `search` holds pairs of adjacent tokens (search-text.ts): older rows get theirs rebuilt. */
export const SEARCH_PAIRS_VERSION = 4

/** A column as the text of a JSON array's element: JSON members as their text, like the sql.js store. */
const readValue = (field: RowField): string =>
  field.kind === 'json' ? `${sqlName(field.name)}::text` : sqlName(field.name)

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

const CAST_COLUMNS = EVENT_COLUMNS.map(([, type], i) =>
  type === 'jsonb' || type === 'tsvector' ? `c${i}::${type}` : `c${i}`,
)
const ARRAY_PARAMETERS = EVENT_COLUMNS.map(
  ([, type], i) => `$${i + 1}::${type === 'jsonb' || type === 'tsvector' ? 'text' : type}[]`,
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
function jsonColumn(value: unknown): string | null {
  if (value === undefined) return null
  const text = JSON.stringify(value)
  return text.includes('\\u0000') ? text.replace(ESCAPED_NUL, '\\ufffd') : text
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

/** A field's value as its column holds it (see textColumn, jsonColumn, filteredColumn). */
function columnValue(field: RowField, value: unknown): string | number | null {
  if (field.kind === 'json') return field.required ? labelsColumn(value as Record<string, string>) : jsonColumn(value)
  if (field.kind !== 'text' || field.required) return (value as string | number | undefined) ?? null
  return field.filtered ? filteredColumn(value as string | undefined) : textColumn(value as string | undefined)
}

/**
 * The insert's column values of one event. An event with a U+0000 anywhere keeps its exact
 * content in `verbatim` (the EVENT_JSON text), which every read prefers, so that its hash verifies.
 */
export function eventColumns(event: StoredEvent, search?: string): (string | number | null)[] {
  const exact = !holdsNul(event)
  const columns = EVENT_ROW.map((field) => columnValue(field, event[field.name]))
  columns.push(exact ? null : JSON.stringify(rowValues(event)), search ?? searchColumn(event, exact))
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
  for (const field of EVENT_ROW) {
    const value = (event as Partial<StoredEvent>)[field.name]
    if (value === undefined) continue
    if (
      field.kind === 'json'
        ? HAS_ESCAPED_NUL.test(JSON.stringify(value))
        : typeof value === 'string' && value.includes(NUL)
    )
      return true
  }
  return false
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
