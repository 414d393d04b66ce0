/**
 * The SQLite layout of `events.sqlite` (docs/design.md) and the mapping between a table row
 * and a StoredEvent.
 *
 * `events` has one column per stored field. `"index"` is the INTEGER PRIMARY KEY, i.e. SQLite's
 * rowid: appends go to the right edge of the table's own B-tree, scans in index order need no
 * extra index, and every secondary index (agent_id, action_type, ...) is implicitly ordered by
 * index within a key, which is the order every query returns. `id` is UNIQUE (the same constraint
 * as a primary key). Optional fields are NULL when absent; `labels`, `input`, `output` and
 * `metadata` are JSON text, so a JSON `null` is the text 'null', not SQL NULL.
 *
 * The text index of GET /v1/search is not here but in `search.sqlite` (search-database.ts).
 */
import type {CheckpointRecord, EventHeader, StoredEvent, TimestampRecord} from '../../core/types.js'
import {
  columnDefinition,
  DIGESTS_FIELDS,
  EVENT_ROW,
  HEADER_FIELDS,
  rowValues,
  SEARCHED_FIELDS,
  sqlName,
  type ColumnKind,
  type RowField,
} from '../event-row.js'
import {memberBit} from '../digests.js'
import type {Param} from './database.js'
import type {SearchSource} from './search-text.js'

/**
 * 2: `hash` and `prev_hash` as 32-byte BLOBs (migrated on open, see MIGRATE_HASHES).
 * 3: the label index keyed by a small integer per (key, value) pair (see MIGRATE_LABELS), and
 *    `timestamp` and `recorded_at` as INTEGER milliseconds since the epoch (see MIGRATE_TIMES).
 * 4: the members of payload commitments and agent signatures (see SQLITE_TYPE).
 * 5: `salts` and `commitments` as BLOBs of their binary form (digests.ts; see MIGRATE_DIGESTS).
 */
export const SCHEMA_VERSION = '5'

/**
 * Schema 4 added the members of payload commitments and agent signatures (docs/verification.md 2).
 * A file of an earlier version gets every optional column of EVENT_ROW it lacks by ALTER TABLE
 * (addedColumns): its events are hash version 1, with none of them.
 */
const SQLITE_TYPE: Readonly<Record<ColumnKind, string>> = {
  text: 'TEXT',
  integer: 'INTEGER',
  real: 'REAL',
  json: 'TEXT',
  hash: 'TEXT',
  time: 'INTEGER',
  digests: 'BLOB',
}

/** The statements that give a file's `events` table the optional columns it lacks, given the ones it has. */
export function addedColumns(present: ReadonlySet<string>): string[] {
  return EVENT_ROW.filter((field) => !field.required && !present.has(field.name)).map(
    (field) => `ALTER TABLE events ADD COLUMN ${columnDefinition(field, SQLITE_TYPE)}`,
  )
}

/**
 * A hash column as the text the API gives. The store writes a hash as a 32-byte BLOB when it is
 * 64 lowercase hex digits (it always is for the service's events); any other value, such as a text
 * written by hand with the sqlite3 CLI, is kept and read back as it is, so that verification
 * reports it (hash_mismatch, broken_link) instead of the read failing or "fixing" it.
 */
export const hashText = (column: string): string =>
  `CASE typeof(${column}) WHEN 'blob' THEN lower(hex(${column})) ELSE ${column} END`
/** A text hash as it is stored: the BLOB when the text round-trips through it exactly. */
const hashValue = (value: string): string =>
  `coalesce(iif(length(${value}) = 64 AND lower(${value}) = ${value}, unhex(${value}), NULL), ${value})`

/**
 * Version 1 files kept hashes as text: converted once, in place, a range of indexes at a time (the
 * Merkle root is unchanged; a file converted in part reads the same, both forms being read).
 */
/** The API's form of a time (docs/api.md), `YYYY-MM-DDTHH:mm:ss.sssZ` (SQLite's dates cover years 0000..9999). */
const TIME_FORMAT = "'%Y-%m-%dT%H:%M:%fZ'"

/**
 * A time column as the text the API gives. The store writes a time as INTEGER milliseconds since
 * the epoch when that integer gives back exactly the text (always, for the service's events); any
 * other value, such as a text written by hand with the sqlite3 CLI, is read back as it is (an
 * integer outside SQLite's dates as that number), so that verification reports it (hash_mismatch).
 */
export const timeText = (column: string): string =>
  `CASE typeof(${column}) WHEN 'integer'
    THEN coalesce(strftime(${TIME_FORMAT}, ${column} / 1000.0, 'unixepoch'), ${column}) ELSE ${column} END`
/** A text time as it is stored, given its milliseconds (or NULL): the integer when it reads back as the text. */
const timeValue = (text: string, ms: string): string =>
  `iif(strftime(${TIME_FORMAT}, ${ms} / 1000.0, 'unixepoch') IS ${text}, CAST(${ms} AS INTEGER), ${text})`
/** The milliseconds of a text time in SQL (SQLite keeps whole milliseconds; 2440587.5 is the epoch's Julian day). */
const millisOf = (text: string): string => `round((julianday(${text}) - 2440587.5) * 86400000.0)`

/** The milliseconds of a time for timeValue, or null when it is not a time (then it is stored as text). */
export function millis(text: string): number | null {
  const ms = Date.parse(text)
  return Number.isFinite(ms) ? ms : null
}

/**
 * Schema 1 and 2 files kept times as text: converted in place like the hashes, a range of
 * indexes at a time, after the columns' declared type became INTEGER (RETYPE_TIMES).
 */
export const MIGRATE_TIMES = `UPDATE events SET timestamp = ${timeValue('timestamp', millisOf('timestamp'))},
  recorded_at = ${timeValue('recorded_at', millisOf('recorded_at'))}
  WHERE "index" >= ? AND "index" < ? AND (typeof(timestamp) = 'text' OR typeof(recorded_at) = 'text')`

/**
 * The declared types of a schema 1 or 2 `events` table with INTEGER times: a column declared TEXT
 * would turn the integers back into text (SQLite's type affinity). Only the declaration changes
 * (no stored value does), so it is edited in sqlite_schema, as SQLite's ALTER TABLE documentation
 * describes for changes that leave the stored content as it is.
 */
export function retypeTimes(createTable: string): string {
  return createTable.replace(/\b(timestamp|recorded_at) TEXT NOT NULL/g, '$1 INTEGER NOT NULL')
}

/**
 * A digests value as it is stored, from its bound text (event-row.ts digestsValue): the BLOB of the
 * stored form given as hex (its first digit is always 0), else the text kept as it is.
 */
export const digestsStored = (value: string): string =>
  `iif(${value} GLOB '0[0-9a-f]*' AND NOT ${value} GLOB '*[^0-9a-f]*' AND length(${value}) % 2 = 0,
    unhex(${value}), ${value})`

/**
 * Whether a digests column names a member: its first byte's bit (read from the byte's second hex
 * digit, the first being 0), or the member of a JSON text kept as it was.
 */
export const digestsHas = (column: string, member: string): string =>
  `CASE typeof(${column})
    WHEN 'blob' THEN (instr('123456789ABCDEF', substr(hex(${column}), 2, 1)) & ${memberBit(member)}) <> 0
    ELSE json_extract(${column}, '$.${member}') IS NOT NULL END`

/**
 * Schema 4 to 5: one row's digests columns (from ?2, in DIGESTS_FIELDS' order, as digestsValue gives
 * them from the JSON text read) stored in their binary form; the caller walks the rows in ranges.
 */
export const MIGRATE_DIGESTS = `UPDATE events SET ${DIGESTS_FIELDS.map(
  (field, i) => `${sqlName(field.name)} = ${digestsStored(`?${i + 2}`)}`,
).join(', ')} WHERE "index" = ?1`

export const MIGRATE_HASHES = `UPDATE events SET prev_hash = ${hashValue('prev_hash')}, hash = ${hashValue('hash')}
  WHERE "index" >= ? AND "index" < ? AND (typeof(prev_hash) = 'text' OR typeof(hash) = 'text')`

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  ${EVENT_ROW.map((field) => columnDefinition(field, SQLITE_TYPE)).join(',\n  ')},
  UNIQUE (agent_id, sequence)
);
CREATE INDEX IF NOT EXISTS events_by_agent ON events (agent_id);
CREATE INDEX IF NOT EXISTS events_by_action_type ON events (action_type);
CREATE INDEX IF NOT EXISTS events_by_timestamp ON events (timestamp);
CREATE INDEX IF NOT EXISTS events_by_trace ON events (trace_id) WHERE trace_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_by_session ON events (session_id) WHERE session_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS label_pairs (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  UNIQUE (key, value)
);
CREATE TABLE IF NOT EXISTS label_index (
  pair INTEGER NOT NULL,
  event_index INTEGER NOT NULL,
  PRIMARY KEY (pair, event_index)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS event_labels_in (event_index, key, value) AS SELECT NULL, NULL, NULL;
CREATE TRIGGER IF NOT EXISTS event_labels_insert INSTEAD OF INSERT ON event_labels_in BEGIN
  INSERT OR IGNORE INTO label_pairs (key, value) VALUES (NEW.key, NEW.value);
  INSERT INTO label_index (pair, event_index)
    SELECT id, NEW.event_index FROM label_pairs WHERE key = NEW.key AND value = NEW.value;
END;
CREATE TABLE IF NOT EXISTS timestamps (
  merkle_root TEXT NOT NULL,
  tree_size INTEGER NOT NULL,
  timestamp TEXT NOT NULL,
  tsa TEXT NOT NULL,
  token TEXT NOT NULL,
  reset_reason TEXT
);
CREATE TABLE IF NOT EXISTS checkpoints (
  tree_size INTEGER NOT NULL,
  root TEXT NOT NULL,
  note TEXT NOT NULL,
  cosignatures TEXT NOT NULL,
  signed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`

/** The time fields, whose milliseconds the insert takes after the table's values (timeValue). */
const TIME_FIELDS = EVENT_ROW.filter((field) => field.kind === 'time')

/** A value as it is stored, from its parameter: hashes as BLOBs and times as milliseconds when exact. */
function storedValue(field: RowField, i: number): string {
  const parameter = `?${i + 1}`
  if (field.kind === 'hash') return hashValue(parameter)
  if (field.kind === 'digests') return digestsStored(parameter)
  if (field.kind === 'time') return timeValue(parameter, `?${EVENT_ROW.length + TIME_FIELDS.indexOf(field) + 1}`)
  return parameter
}

export const INSERT_EVENT = `INSERT INTO events (${EVENT_ROW.map((field) => sqlName(field.name)).join(', ')})
  VALUES (${EVENT_ROW.map(storedValue).join(', ')})`
/**
 * One label of an event, through the trigger above: the pair's id is looked up (or given) in
 * `label_pairs`, and `label_index` gets a row of two small integers (label filters stay indexed).
 */
export const INSERT_LABEL = 'INSERT INTO event_labels_in (event_index, key, value) VALUES (?, ?, ?)'

/**
 * Schema 2 to 3: the rows of the former `event_labels (key, value, event_index)` after the row
 * (?1, ?2, ?3) and up to (?4, ?5, ?6), both in its primary key order, copied into the dictionary
 * form; the caller walks the table in ranges (one transaction each) and then drops it.
 */
export const MIGRATE_LABELS = [
  `INSERT OR IGNORE INTO label_pairs (key, value) SELECT DISTINCT key, value FROM event_labels
    WHERE (key, value, event_index) > (?1, ?2, ?3) AND (key, value, event_index) <= (?4, ?5, ?6)`,
  `INSERT OR IGNORE INTO label_index (pair, event_index) SELECT p.id, l.event_index FROM event_labels l
    JOIN label_pairs p ON p.key = l.key AND p.value = l.value
    WHERE (l.key, l.value, l.event_index) > (?1, ?2, ?3) AND (l.key, l.value, l.event_index) <= (?4, ?5, ?6)`,
] as const
export const INSERT_TIMESTAMP =
  'INSERT INTO timestamps (merkle_root, tree_size, timestamp, tsa, token, reset_reason) VALUES (?, ?, ?, ?, ?, ?)'

/**
 * A column as the text the API gives (hashes as hex, times as docs/api.md writes them); digests as the
 * hex of their stored form, which toEvent decodes (a text kept as it was stays that text).
 */
function readValue(field: RowField): string {
  const name = sqlName(field.name)
  if (field.kind === 'hash' || field.kind === 'digests') return hashText(name)
  return field.kind === 'time' ? timeText(name) : name
}

/**
 * One row as a single JSON array text in EVENT_ROW's order, read back with one JSON.parse (toEvent):
 * much cheaper than fetching 25 columns one by one through sql.js. JSON columns stay text.
 */
export const EVENT_JSON = `json_array(${EVENT_ROW.map(readValue).join(', ')})`
/**
 * The EventHeader of a row. `labels` is embedded as JSON when it is JSON (always, unless the file
 * was edited by hand; then it stays text, as toEvent would leave it), so one JSON.parse
 * reads the whole row.
 */
export const HEADER_JSON = `json_array(${HEADER_FIELDS.map((field) =>
  field.kind === 'json'
    ? `CASE WHEN json_valid(${sqlName(field.name)}) THEN json(${sqlName(field.name)}) ELSE ${sqlName(field.name)} END`
    : readValue(field),
).join(', ')})`
export const TIMESTAMP_JSON = 'json_array(merkle_root, tree_size, timestamp, tsa, token, reset_reason)'

/** The parameters of INSERT_EVENT: the event's values, then the milliseconds of its times. */
export function eventRow(event: StoredEvent): Param[] {
  const row: Param[] = rowValues(event)
  for (const field of TIME_FIELDS) row.push(millis(event[field.name] as string))
  return row
}

/** The parameters of INSERT_LABEL, one row per label. */
export function labelRows(event: StoredEvent, into: Param[][]): void {
  for (const key of Object.keys(event.labels)) into.push([event.index, key, event.labels[key]!])
}

/** Where each searched field is in INSERT_EVENT's parameters (eventRow). */
const SEARCHED_POSITIONS = SEARCHED_FIELDS.map((field) => EVENT_ROW.indexOf(field))
const INDEX_POSITION = EVENT_ROW.findIndex((field) => field.name === 'index')

/** What the search index needs of an event, from its INSERT_EVENT parameters (eventRow). */
export function searchSource(row: Param[]): SearchSource {
  return [row[INDEX_POSITION], ...SEARCHED_POSITIONS.map((i) => row[i])] as SearchSource
}

/**
 * The EventHeader of a row as fields joined by U+001F, several times cheaper to build than
 * HEADER_JSON (SQLite's json_array is the expensive part of a scan). Validation keeps control
 * characters out of every one of these fields (labels are JSON text, whose strings escape them),
 * and none is NULL (concat_ws would skip it), so only a hand-edited row can fail to split into
 * its fields; headersOfText then gives up and the caller reads that batch as HEADER_JSON.
 */
export const HEADER_TEXT = `concat_ws(char(31), ${HEADER_FIELDS.map(readValue).join(', ')})`

/** Parsed label sets, shared (frozen) between the events that carry the same labels text. */
export class LabelsCache {
  static readonly MAX = 10_000
  readonly #parsed = new Map<string, Record<string, string>>()

  get(text: string): Record<string, string> | undefined {
    let labels = this.#parsed.get(text)
    if (labels === undefined) {
      try {
        labels = Object.freeze(JSON.parse(text)) as Record<string, string>
      } catch {
        return undefined
      }
      if (this.#parsed.size >= LabelsCache.MAX) this.#parsed.clear()
      this.#parsed.set(text, labels)
    }
    return labels
  }
}

/** Rows of HEADER_TEXT as EventHeaders; undefined when any row does not have that form. */
export function headersOfText(rows: string[], labelsCache: LabelsCache): EventHeader[] | undefined {
  const headers: EventHeader[] = []
  for (const row of rows) {
    const f = row.split('\x1f')
    if (f.length !== HEADER_FIELDS.length) return undefined
    const header: Record<string, unknown> = {}
    for (let i = 0; i < f.length; i++) {
      const {name, kind} = HEADER_FIELDS[i]!
      if (kind === 'integer') {
        const value = Number(f[i])
        if (!Number.isSafeInteger(value)) return undefined
        header[name] = value
      } else if (kind === 'json') {
        const value = labelsCache.get(f[i]!)
        if (value === undefined || typeof value !== 'object') return undefined
        header[name] = value
      } else header[name] = f[i]
    }
    headers.push(header as unknown as EventHeader)
  }
  return headers
}

/** The parameters of INSERT_TIMESTAMP. */
export function timestampRow(record: TimestampRecord): Param[] {
  return [record.merkle_root, record.tree_size, record.timestamp, record.tsa, record.token, record.reset_reason ?? null]
}

export function toTimestamp(rowJson: string): TimestampRecord {
  const [merkle_root, tree_size, timestamp, tsa, token, resetReason] = JSON.parse(rowJson) as [
    string,
    number,
    string,
    string,
    string,
    string | null,
  ]
  const record: TimestampRecord = {merkle_root, tree_size, timestamp, tsa, token}
  if (resetReason !== null) record.reset_reason = resetReason
  return record
}

export const INSERT_CHECKPOINT =
  'INSERT INTO checkpoints (tree_size, root, note, cosignatures, signed_at) VALUES (?, ?, ?, ?, ?)'
export const CHECKPOINT_JSON = 'json_array(tree_size, root, note, cosignatures, signed_at)'

export function checkpointRow(record: CheckpointRecord): Param[] {
  return [record.tree_size, record.root, record.note, JSON.stringify(record.cosignatures), record.signed_at]
}

export function toCheckpoint(rowJson: string): CheckpointRecord {
  const row = JSON.parse(rowJson) as [number, string, string, string, string]
  const [tree_size, root, note, cosignatures, signed_at] = row
  return {tree_size, root, note, cosignatures: JSON.parse(cosignatures) as string[], signed_at}
}
