/**
 * Erasure in the sql.js store (docs/erasure.md): its rows in the sequence of erasure-sequence.ts.
 * Which events a selection covers, and the batch update that takes members out of covered events. A
 * member's value and salt go and `erased` names the erasure in the same UPDATE of the same row, and
 * every batch is one transaction, so no snapshot ever holds an event half erased.
 *
 * An erasure's intent is kept in `pending_erasures` from before its event is recorded until it is
 * applied, so that a snapshot taken in between still holds it: opening the store completes it.
 */
import type {ErasureIntent} from '../../core/erasure/index.js'
import {PAYLOAD_MEMBERS} from '../../core/event/index.js'
import type {PayloadMemberName, StoredEvent} from '../../core/types.js'
import {erasureConditions} from '../erasure-rules.js'
import {completePending, runErasure, type ErasedEvent, type ErasureDriver} from '../erasure-sequence.js'
import {digestsValue, jsonText, toEvent} from '../event-row.js'
import type {ErasureCandidate, ErasurePlan, ErasureSelection, ErasureTaken} from '../store.js'
import type {Param, SqliteDatabase} from './database.js'
import {encodeRecord, type JournalledErasure} from './journal.js'
import {digestsHas, digestsStored, EVENT_JSON, eventRow, millis, searchSource} from './schema.js'
import type {SearchIndex} from './search-index.js'
import type {Snapshots} from './snapshots.js'
import type {Tables} from './tables.js'
import {whereClause, type Where} from './where.js'
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

const {committedCount, erasable, status, touched} = erasureConditions({
  serviceEvent: (length, prefix) => `substr(agent_id, 1, ${length}) = '${prefix}'`,
  commits: (m) => digestsHas('commitments', m),
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
function erasableIndexes(db: SqliteDatabase, intent: ErasureIntent): number[] {
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

/** A row's members and their salts go, `erased` names the erasure: one UPDATE of the row. */
const ERASE_ROW = `UPDATE events SET ${PAYLOAD_MEMBERS.map((m, i) => `${m} = iif(?${i + 2}, NULL, ${m})`).join(', ')},
  salts = ${digestsStored('?6')}, erased = ?7 WHERE "index" = ?1`
const READ_ROWS = `SELECT ${EVENT_JSON} FROM events WHERE "index" IN (SELECT value FROM json_each(?)) ORDER BY "index"`

/** The parameters of ERASE_ROW for an event as the erasure leaves it. */
function eraseRowParams({before, after}: ErasedEvent): Param[] {
  const flags = PAYLOAD_MEMBERS.map((m) => (before[m] !== undefined && after[m] === undefined ? 1 : 0))
  return [after.index, ...flags, digestsValue(after.salts), jsonText(after.erased)]
}

export function addPending(db: SqliteDatabase, pending: JournalledErasure): void {
  const sql = 'INSERT OR REPLACE INTO pending_erasures (id, intent, epoch) VALUES (?, ?, ?)'
  db.prepare(sql).runRows([[pending.intent.id, JSON.stringify(pending.intent), pending.epoch]])
}

function removePending(db: SqliteDatabase, id: string): void {
  db.prepare('DELETE FROM pending_erasures WHERE id = ?').runRows([[id]])
}

/** The pending erasures, in the order of their epochs. */
function pendingErasures(db: SqliteDatabase): JournalledErasure[] {
  return db
    .prepare('SELECT json_array(intent, epoch) FROM pending_erasures ORDER BY epoch')
    .texts()
    .map((row) => {
      const [intent, epoch] = JSON.parse(row) as [string, number]
      return {intent: JSON.parse(intent) as ErasureIntent, epoch}
    })
}

/**
 * The sql.js side of the erasure sequence (erasure-sequence.ts): one erasure after the other (each
 * plans on what the ones before it left), each journalled as pending before its event is recorded,
 * then applied batch by batch in the write queue, between appends, the search index along.
 */
export class Erasures implements ErasureDriver<JournalledErasure> {
  readonly batchSize = ERASE_BATCH
  #chain: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly tables: Tables,
    private readonly writes: JournalWriter,
    private readonly search: SearchIndex,
    private readonly snapshots: Snapshots,
  ) {}

  erase(plan: () => Promise<ErasurePlan | undefined>): Promise<ErasureTaken | undefined> {
    return runErasure(this, plan)
  }

  /** An erasure cut short: completed now, or dropped when its event was never recorded. */
  completePending(): Promise<void> {
    return this.exclusive(() => completePending(this))
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(work)
    this.#chain = run.catch(() => undefined)
    return run
  }

  async addPending(intent: ErasureIntent): Promise<JournalledErasure> {
    const pending = {intent, epoch: this.tables.erasureEpoch() + 1}
    // Durable before the event: a crash from here on is completed on the next opening.
    const record = encodeRecord({erasure: pending})
    await this.writes.appendSmall(record, () => addPending(this.tables.db, pending), 'the erasure')
    return pending
  }

  async removePending(id: string): Promise<void> {
    removePending(this.tables.db, id)
  }

  async pendingErasures(): Promise<{pending: JournalledErasure; recorded: boolean}[]> {
    const recorded = this.tables.db.prepare('SELECT count(*) FROM events WHERE id = ?')
    return pendingErasures(this.tables.db).map((pending) => ({
      pending,
      recorded: Number(recorded.texts([pending.intent.id])[0]) > 0,
    }))
  }

  /** The index is told before the store's epoch moves: it is opened, if need be, at the old one. */
  async begin({epoch}: JournalledErasure): Promise<void> {
    this.search.beginErasure(epoch - 1, epoch)
    this.tables.setMeta('erasure_epoch', String(epoch))
  }

  erasableIndexes(intent: ErasureIntent): Promise<number[]> {
    return this.writes.serial(async () => erasableIndexes(this.tables.db, intent))
  }

  /** Each row in one UPDATE, the batch in one transaction, so no snapshot holds an event half erased. */
  rewriteBatch(
    _intent: ErasureIntent,
    indexes: readonly number[],
    rewrite: (events: readonly StoredEvent[]) => ErasedEvent[],
  ): Promise<void> {
    const {db} = this.tables
    return this.writes.serial(async () => {
      this.tables.assertOpen()
      let changed: ErasedEvent[] = []
      db.transaction(() => {
        changed = rewrite(
          db
            .prepare(READ_ROWS)
            .texts([JSON.stringify(indexes)])
            .map(toEvent),
        )
        if (changed.length > 0) db.prepare(ERASE_ROW).runRows(changed.map(eraseRowParams))
      })
      const source = (event: StoredEvent) => JSON.stringify(searchSource(eventRow(event)))
      this.search.eraseBatch(
        changed.map(({before}) => source(before)),
        changed.map(({after}) => source(after)),
      )
    })
  }

  /** Writes the snapshot, which deletes the journals that held the values, and saves the index. */
  async finish({intent}: JournalledErasure): Promise<void> {
    removePending(this.tables.db, intent.id)
    this.snapshots.changed()
    const searched = this.search.endErasure()
    try {
      await this.snapshots.inTurn()
    } finally {
      await searched
    }
  }
}
