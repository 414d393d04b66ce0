/**
 * Erasure in the sql.js store (docs/erasure.md), as statements over sets of rows: which events a
 * selection covers, and the batch update that takes members out of covered events. A member's value
 * and salt go and `erased` names the erasure in the same UPDATE of the same row, and every batch is
 * one transaction, so no snapshot ever holds an event half erased.
 *
 * An erasure's intent is kept in `pending_erasures` from before its event is recorded until it is
 * applied, so that a snapshot taken in between still holds it: opening the store completes it.
 */
import type {ErasureIntent} from '../../core/erasure/index.js'
import {erasureConditions} from '../erasure-rules.js'
import {PAYLOAD_MEMBERS} from '../../core/event/index.js'
import type {PayloadMemberName} from '../../core/types.js'
import {whereClause, type Where} from './where.js'
import {millis} from './schema.js'
import {SEARCHED_FIELDS} from '../event-row.js'
import {SEARCH_SOURCE_JSON, type SearchSource} from './search-text.js'
import type {Param, SqliteDatabase} from './database.js'
import type {ErasureCandidate, ErasurePlan, ErasureSelection, ErasureTaken} from '../store.js'
import type {StoredEvent} from '../../core/types.js'
import {encodeRecord} from './journal.js'
import type {SearchIndex} from './search-index.js'
import type {Snapshots} from './snapshots.js'
import type {Tables} from './tables.js'
import type {JournalWriter} from './writes.js'

/**
 * Pending intents with the erasure epoch each takes the store to; secure_delete has SQLite
 * overwrite what an erasure frees (cells and pages), so no erased value stays in the file.
 */
export const ERASURE_SCHEMA = `PRAGMA secure_delete = ON;
CREATE TABLE IF NOT EXISTS pending_erasures (id TEXT PRIMARY KEY, intent TEXT NOT NULL, epoch INTEGER NOT NULL)
  WITHOUT ROWID;`

/** Events updated per transaction. */
export const ERASE_BATCH = 5000

const {committed, committedCount, erasable, status, touched} = erasureConditions({
  serviceEvent: (length, prefix) => `substr(agent_id, 1, ${length}) = '${prefix}'`,
  commits: (m) => `json_extract(commitments, '$.${m}') IS NOT NULL`,
  erased: (m) => `json_extract(erased, '$.${m}') IS NOT NULL`,
})

/** `where` with more conditions joined by AND. */
function and(where: Where, ...conditions: string[]): string {
  const all = [where.sql.replace(/^WHERE /, ''), ...conditions].filter((condition) => condition !== '')
  return `WHERE ${all.join(' AND ')}`
}

function selectionWhere(selection: ErasureSelection): Where {
  const where = whereClause(selection.filter, {toIndex: selection.before_index})
  if (selection.recorded_before === undefined) return where
  return {sql: and(where, 'recorded_at < ?'), params: [...where.params, millis(selection.recorded_before)]}
}

/**
 * Each event a selection matches that holds or held one of `members`: whether it can be erased
 * ('erase', with the number of members it holds), or why not.
 */
export function erasureCandidates(
  db: SqliteDatabase,
  selection: ErasureSelection,
  members: readonly PayloadMemberName[],
  erasableOnly = false,
): ErasureCandidate[] {
  const where = selectionWhere(selection)
  const matched = erasableOnly ? erasable(members) : [touched(members)]
  const sql = `SELECT json_array("index", id, ${status(members)}, ${committedCount(members)})
    FROM events ${and(where, ...matched)} ORDER BY "index"`
  return db
    .prepare(sql)
    .texts(where.params)
    .map((row) => {
      const [index, id, status, held] = JSON.parse(row) as [number, string, ErasureCandidate['status'], number]
      return {index, id, status, members: held}
    })
}

/** The events the intent covers that still hold a committed value of one of its members, index ascending. */
export function erasableIndexes(db: SqliteDatabase, intent: ErasureIntent): number[] {
  const where: Where =
    intent.ids === undefined
      ? selectionWhere({
          filter: intent.filter ?? {},
          before_index: intent.before_index ?? 0,
          recorded_before: intent.recorded_before,
        })
      : {sql: 'WHERE id IN (SELECT value FROM json_each(?))', params: [JSON.stringify(Object.keys(intent.ids))]}
  const sql = `SELECT "index" FROM events ${and(where, ...erasable(intent.members))} ORDER BY "index"`
  return db.prepare(sql).texts(where.params).map(Number)
}

/** What a batch reads of each covered row: the members it holds committed, salts, erasures, search text. */
const ERASABLE_ROW = `json_array("index", id, ${PAYLOAD_MEMBERS.map(committed).join(', ')}, salts, erased,
  ${SEARCH_SOURCE_JSON})`
/** A row's members and their salts go, `erased` names the erasure: one UPDATE of the row. */
const ERASE_ROW = `UPDATE events SET ${PAYLOAD_MEMBERS.map((m, i) => `${m} = iif(?${i + 2}, NULL, ${m})`).join(', ')},
  salts = ?6, erased = ?7 WHERE "index" = ?1`
/** Where each payload member is in a SearchSource (search-text.ts), whose text an erased member no longer gives. */
const sourcePosition = (member: PayloadMemberName): number =>
  SEARCHED_FIELDS.findIndex((field) => field.name === member) + 1

/** One batch erased: the members taken, and the search text of its events before and after. */
export interface ErasedBatch {
  members: number
  before: string[]
  after: string[]
}

/**
 * Erases the intent's members from the events at `indexes` (all covered by it), each row in one
 * UPDATE: every value held and committed goes with its salt (emptied `salts` become NULL), and
 * `erased` names the erasure. Run inside the caller's transaction.
 */
export function eraseRows(db: SqliteDatabase, intent: ErasureIntent, indexes: readonly number[]): ErasedBatch {
  const read = `SELECT ${ERASABLE_ROW} FROM events WHERE "index" IN (SELECT value FROM json_each(?)) ORDER BY "index"`
  const updates: Param[][] = []
  const batch: ErasedBatch = {members: 0, before: [], after: []}
  for (const text of db.prepare(read).texts([JSON.stringify(indexes)])) {
    const row = JSON.parse(text) as [number, string, ...number[]]
    const [index, id] = row
    const held = PAYLOAD_MEMBERS.map((_, i) => row[2 + i] === 1)
    const [saltsText, erasedText, source] = row.slice(6) as unknown as [string | null, string | null, SearchSource]
    const wanted = intent.ids === undefined ? intent.members : (intent.ids[id] ?? [])
    const removed = PAYLOAD_MEMBERS.filter((m, i) => held[i] && wanted.includes(m))
    if (removed.length === 0) continue
    const salts = JSON.parse(saltsText ?? '{}') as Record<string, string>
    const erased = JSON.parse(erasedText ?? '{}') as Record<string, string>
    const after = [...source] as SearchSource
    for (const member of removed) {
      delete salts[member]
      erased[member] = intent.id
      after[sourcePosition(member)] = null
    }
    const flags = PAYLOAD_MEMBERS.map((m) => (removed.includes(m) ? 1 : 0))
    updates.push([
      index,
      ...flags,
      Object.keys(salts).length === 0 ? null : JSON.stringify(salts),
      JSON.stringify(erased),
    ])
    batch.members += removed.length
    batch.before.push(JSON.stringify(source))
    batch.after.push(JSON.stringify(after))
  }
  if (updates.length > 0) db.prepare(ERASE_ROW).runRows(updates)
  return batch
}

export interface PendingErasure {
  intent: ErasureIntent
  /** The erasure epoch the store is at once the erasure is applied. */
  epoch: number
}

export function addPending(db: SqliteDatabase, pending: PendingErasure): void {
  const sql = 'INSERT OR REPLACE INTO pending_erasures (id, intent, epoch) VALUES (?, ?, ?)'
  db.prepare(sql).runRows([[pending.intent.id, JSON.stringify(pending.intent), pending.epoch]])
}

export function removePending(db: SqliteDatabase, id: string): void {
  db.prepare('DELETE FROM pending_erasures WHERE id = ?').runRows([[id]])
}

/** The pending erasures, in the order of their epochs. */
export function pendingErasures(db: SqliteDatabase): PendingErasure[] {
  return db
    .prepare('SELECT json_array(intent, epoch) FROM pending_erasures ORDER BY epoch')
    .texts()
    .map((row) => {
      const [intent, epoch] = JSON.parse(row) as [string, number]
      return {intent: JSON.parse(intent) as ErasureIntent, epoch}
    })
}

/**
 * The store's erasures: one after the other (each plans on what the ones before it left), each
 * journalled as pending before its event is recorded, then applied batch by batch.
 */
export class Erasures {
  #chain: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly tables: Tables,
    private readonly writes: JournalWriter,
    private readonly search: SearchIndex,
    private readonly snapshots: Snapshots,
  ) {}

  erase(plan: () => Promise<ErasurePlan | undefined>): Promise<ErasureTaken | undefined> {
    const run = this.#chain.then(async () => {
      const planned = await plan()
      if (planned === undefined) return undefined
      const pending = {intent: planned.intent, epoch: this.tables.erasureEpoch() + 1}
      // Durable before the event: a crash from here on is completed on the next opening.
      const record = encodeRecord({erasure: pending})
      await this.writes.appendSmall(record, () => addPending(this.tables.db, pending), 'the erasure')
      let erasure: StoredEvent
      try {
        erasure = await planned.record()
      } catch (error) {
        removePending(this.tables.db, pending.intent.id)
        throw error
      }
      return {erasure, ...(await this.#apply(pending))}
    })
    this.#chain = run.catch(() => undefined)
    return run
  }

  /** An erasure cut short: completed now, or dropped when its event was never recorded. */
  async completePending(recorded: (id: string) => boolean): Promise<void> {
    for (const pending of pendingErasures(this.tables.db)) {
      if (!recorded(pending.intent.id)) removePending(this.tables.db, pending.intent.id)
      else await this.#apply(pending)
    }
  }

  /**
   * Erases batch by batch (each in the write queue, between appends), the search index along, then
   * writes the snapshot, which deletes the journals that held the values, and saves the index.
   */
  async #apply({intent, epoch}: PendingErasure): Promise<{events: number; members: number}> {
    const {db} = this.tables
    // The index is told before the store's epoch moves: it is opened, if need be, at the old one.
    this.search.beginErasure(epoch - 1, epoch)
    this.tables.setMeta('erasure_epoch', String(epoch))
    const indexes = await this.writes.serial(async () => erasableIndexes(db, intent))
    let members = 0
    for (let at = 0; at < indexes.length; at += ERASE_BATCH) {
      const batch = indexes.slice(at, at + ERASE_BATCH)
      await this.writes.serial(async () => {
        this.tables.assertOpen()
        let erased: ErasedBatch = {members: 0, before: [], after: []}
        db.transaction(() => {
          erased = eraseRows(db, intent, batch)
        })
        members += erased.members
        this.search.eraseBatch(erased.before, erased.after)
      })
    }
    removePending(db, intent.id)
    this.snapshots.changed()
    const searched = this.search.endErasure()
    try {
      await this.snapshots.inTurn()
    } finally {
      await searched
    }
    return {events: indexes.length, members}
  }
}
