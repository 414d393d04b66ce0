/**
 * What opening does to an `events.sqlite` written by an earlier version, once: the schema
 * migrations (schema.ts, SCHEMA_VERSION), the columns and tables added since, and the aggregate
 * tables rebuilt or recounted when they do not match the events. Each says whether it changed the
 * file, so that the store writes a snapshot rather than redoing it at every start.
 */
import type {Param} from './database.js'
import {REBUILD_AGGREGATES, RECOUNT_ACTIONS} from './aggregates.js'
import {ERASURE_SCHEMA} from './erasure.js'
import type {Footprint} from './footprint.js'
import {digestsHex} from '../digests.js'
import {DIGESTS_FIELDS, parseJsonColumn, sqlName} from '../event-row.js'
import {
  addedColumns,
  MIGRATE_DIGESTS,
  MIGRATE_HASHES,
  MIGRATE_LABELS,
  MIGRATE_TIMES,
  retypeTimes,
  SCHEMA_VERSION,
} from './schema.js'
import type {Tables} from './tables.js'

/** Rows converted per transaction by the schema 2 migration; the largest database compacted after it. */
const MIGRATE_BATCH = 50_000
const VACUUM_UP_TO_BYTES = 512 * 1024 * 1024

/** Brings the file's layout up to this version's; true when anything changed. */
export function upgradeLayout(tables: Tables, footprint: Footprint): boolean {
  const {db} = tables
  // Once, for files of an earlier layout: then compacted, since the rows shrank in place.
  const version = Number(tables.meta('schema_version') ?? '1')
  const upgraded = version < Number(SCHEMA_VERSION)
  if (version < DIGESTS_VERSION - 1) migrate(tables, version)
  tables.setMeta('schema_version', SCHEMA_VERSION)
  // Files written before the search index moved to search.sqlite hold it in events.sqlite.
  const migrated = tables.number("SELECT count(*) FROM sqlite_master WHERE name = 'events_fts'") > 0
  if (migrated) db.exec('DROP TABLE events_fts')
  // Files written before `timestamps reset` existed lack the column of its reason.
  const resetColumn = "SELECT count(*) FROM pragma_table_info('timestamps') WHERE name = 'reset_reason'"
  const resettable = tables.number(resetColumn) === 1
  if (!resettable) db.exec('ALTER TABLE timestamps ADD COLUMN reset_reason TEXT')
  // Files written before a member of the row existed (schema 4) lack its column: NULL for every old event.
  const present = new Set(db.prepare("SELECT name FROM pragma_table_info('events')").texts())
  const added = addedColumns(present)
  for (const statement of added) db.exec(statement)
  if (version < DIGESTS_VERSION && DIGESTS_FIELDS.every((field) => present.has(field.name))) migrateDigests(tables)
  if (upgraded) compact(tables, footprint)
  db.exec(ERASURE_SCHEMA)
  return upgraded || migrated || !resettable || added.length > 0
}

/** The version from which `salts` and `commitments` are kept in their binary form (schema.ts). */
const DIGESTS_VERSION = 5

/**
 * Schema 4 to 5: the JSON texts of `salts` and `commitments` in their binary form (digests.ts), a
 * range of MIGRATE_BATCH indexes a transaction. A text of another shape (only after someone edited
 * the file) is kept as it is, so that it reads back the same.
 */
function migrateDigests({db}: Tables): void {
  const range = db.prepare('SELECT json_array(min("index"), max("index")) FROM events').texts()[0]!
  const [low, high] = JSON.parse(range) as [number | null, number | null]
  if (low === null || high === null) return
  const columns = DIGESTS_FIELDS.map((field) => sqlName(field.name))
  const read = db.prepare(`SELECT json_array("index", ${columns.join(', ')}) FROM events
    WHERE "index" >= ? AND "index" < ? AND (${columns.map((c) => `typeof(${c}) = 'text'`).join(' OR ')})`)
  const stored = (text: string | null) => (text === null ? null : (digestsHex(parseJsonColumn(text)) ?? text))
  for (let from = low; from <= high; from += MIGRATE_BATCH) {
    const rows = read.texts([from, from + MIGRATE_BATCH]).map((row) => {
      const [index, ...texts] = JSON.parse(row) as [number, ...(string | null)[]]
      return [index, ...texts.map(stored)]
    })
    if (rows.length > 0) db.transaction(() => db.prepare(MIGRATE_DIGESTS).runRows(rows))
  }
}

/**
 * After a migration, VACUUM returns the space the rows gave up, where the database is small enough
 * for its copy to fit SQLite's WebAssembly memory too (2 GiB at most); a larger file keeps its size.
 */
function compact(tables: Tables, footprint: Footprint): void {
  if (footprint.bytes() > VACUUM_UP_TO_BYTES) return
  try {
    tables.db.exec('VACUUM')
  } catch {
    // Compaction only: the migrated file is whole without it.
  }
}

/** Rebuilds or recounts the aggregate tables when they do not match `events` rows; true when it did. */
export function repairAggregates(tables: Tables, rowCount: number): boolean {
  if (rowCount > 0 && tables.number('SELECT count(*) FROM agents') === 0) {
    tables.db.transaction(() => tables.db.exec(REBUILD_AGGREGATES))
    return true
  }
  if (!countsCover(tables, rowCount)) {
    // The counts of /v1/stats are derived data (unlike the agents table's heads, which chain
    // verification compares the events with): counts that do not add up to the events are
    // recounted rather than served.
    tables.db.transaction(() => tables.db.exec(RECOUNT_ACTIONS))
    return true
  }
  return false
}

/** Whether action_counts holds, for each of its two fields, counts that add up to `events`. */
function countsCover(tables: Tables, events: number): boolean {
  const sums = tables.db
    .prepare(
      "SELECT json_array(coalesce(sum(CASE WHEN field = 'action_type' THEN count END), 0), coalesce(sum(CASE " +
        "WHEN field = 'action_status' THEN count END), 0), count(*)) FROM action_counts",
    )
    .texts()
  const [types, statuses, rows] = JSON.parse(sums[0]!) as number[]
  return types === events && statuses === events && (events > 0 || rows === 0)
}

/**
 * Schema 1 or 2 to 3 (schema.ts): the times' declared type, then the hashes (from 1) and times
 * in place, one transaction per MIGRATE_BATCH rows, since SQLite keeps the
 * rollback journal of a transaction in WebAssembly memory (2 GiB at most, the whole database
 * for one transaction over every row).
 */
function migrate(tables: Tables, version: number): void {
  const {db} = tables
  db.transaction(() => {
    const [create] = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'").texts()
    if (create === undefined || retypeTimes(create) === create) return
    const cookie = tables.number('PRAGMA schema_version')
    db.exec('PRAGMA writable_schema = ON')
    const update = "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'events'"
    db.prepare(update).runRows([[retypeTimes(create)]])
    db.exec(`PRAGMA schema_version = ${cookie + 1}; PRAGMA writable_schema = OFF`)
  })
  const steps = version < 2 ? [MIGRATE_HASHES, MIGRATE_TIMES] : [MIGRATE_TIMES]
  const range = db.prepare('SELECT json_array(min("index"), max("index")) FROM events').texts()[0]!
  const [low, high] = JSON.parse(range) as [number | null, number | null]
  if (low !== null && high !== null) {
    for (let from = low; from <= high; from += MIGRATE_BATCH) {
      db.transaction(() => {
        for (const sql of steps) db.prepare(sql).runRows([[from, from + MIGRATE_BATCH]])
      })
    }
  }
  if (tables.number("SELECT count(*) FROM sqlite_master WHERE name = 'event_labels'") > 0) migrateLabels(tables)
}

/**
 * Schema 2 to 3: the former label table, MIGRATE_BATCH rows a transaction in its key order (each
 * range ends at the row found by OFFSET, so no batch reads the rows before it), then dropped.
 */
function migrateLabels({db}: Tables): void {
  const next = db.prepare(`SELECT json_array(key, value, event_index) FROM event_labels
    WHERE (key, value, event_index) > (?, ?, ?) ORDER BY key, value, event_index LIMIT 1 OFFSET ${MIGRATE_BATCH - 1}`)
  const last = db.prepare(`SELECT json_array(key, value, event_index) FROM event_labels
    ORDER BY key DESC, value DESC, event_index DESC LIMIT 1`)
  // Before every row: numbers sort before text in SQLite, so even a key edited into a number.
  let after: Param[] = [-Infinity, -Infinity, -Infinity]
  const [end] = last.texts()
  while (end !== undefined) {
    const [bound] = next.texts(after)
    const upTo = JSON.parse(bound ?? end) as Param[]
    db.transaction(() => {
      for (const sql of MIGRATE_LABELS) db.prepare(sql).runRows([[...after, ...upTo]])
    })
    if (bound === undefined) break
    after = upTo
  }
  db.exec('DROP TABLE event_labels')
}
