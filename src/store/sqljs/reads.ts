/**
 * The sql.js store's reads: synchronous SQLite queries between the writes, so they never see half
 * of an append. Scans page through the events in index order, one query per batch.
 */
import type {
  AgentHead,
  AgentSummary,
  CheckpointRecord,
  EventFilter,
  EventHeader,
  Page,
  PageResult,
  StoreStats,
  StoredEvent,
  TimestampRecord,
} from '../../core/types.js'
import {indexOfRowText, toEvent, toHeader} from '../event-row.js'
import {aggregateCounted, isEmptyFilter} from '../filters.js'
import {hashedBatches, type HashedBatch} from '../hashed-scan.js'
import {hashingThreads} from '../../threads/hashing-threads.js'
import type {SearchQuery} from '../../core/search/index.js'
import type {ScanOptions} from '../store.js'
import {AGENTS_JSON, COUNTS_JSON, toCounts, toHead, toSummary} from './aggregates.js'
import {
  CHECKPOINT_JSON,
  EVENT_JSON,
  hashText,
  HEADER_JSON,
  HEADER_TEXT,
  headersOfText,
  LabelsCache,
  timeText,
  TIMESTAMP_JSON,
  toCheckpoint,
  toTimestamp,
} from './schema.js'
import {SCAN_JSON} from './scan-row.js'
import type {SearchIndex} from './search-index.js'
import {matchExpression} from './search-text.js'
import type {Tables} from './tables.js'
import {whereClause, type Where} from './where.js'

/** Events per query when scanning. */
export const SCAN_BATCH = 5000
/** Hashes per chunk of eventHashChunks (4 MiB of hex), and per query of eventHashes. */
const HASH_CHUNK = 65_536

export class Reads {
  constructor(
    private readonly tables: Tables,
    private readonly search: SearchIndex,
  ) {}

  get #db() {
    return this.tables.db
  }

  getEvent(id: string): StoredEvent | undefined {
    const [row] = this.#db.prepare(`SELECT ${EVENT_JSON} FROM events WHERE id = ?`).texts([id])
    return row === undefined ? undefined : toEvent(row)
  }

  getEvents(ids: string[]): Map<string, StoredEvent> {
    const found = new Map<string, StoredEvent>()
    if (ids.length === 0) return found
    const sql = `SELECT ${EVENT_JSON} FROM events WHERE id IN (SELECT value FROM json_each(?))`
    for (const row of this.#db.prepare(sql).texts([JSON.stringify(ids)])) {
      const event = toEvent(row)
      found.set(event.id, event)
    }
    return found
  }

  /** An agent's events after a sequence, in sequence order (the key events sequencing catches up on). */
  agentEventsAfter(agentId: string, sequence: number): StoredEvent[] {
    const sql = `SELECT ${EVENT_JSON} FROM events WHERE agent_id = ? AND sequence > ? ORDER BY sequence`
    return this.#db.prepare(sql).texts([agentId, sequence]).map(toEvent)
  }

  queryEvents(filter: EventFilter, page: Page): PageResult<StoredEvent> {
    const where = whereClause(filter)
    const total = this.total(filter, where)
    const sql = `SELECT ${EVENT_JSON} FROM events ${where.sql} ORDER BY "index" LIMIT ? OFFSET ?`
    const items = this.#db
      .prepare(sql)
      .texts([...where.params, page.limit, page.offset])
      .map(toEvent)
    return {total, items}
  }

  /**
   * The number of events matching a filter. Without one, or with only an agent or only an action
   * type, the aggregate tables kept with every append answer at once (the same numbers as
   * /v1/agents and /v1/stats); counting an agent's 20,000 index entries cost milliseconds a query.
   */
  total(filter: EventFilter, where: Where = whereClause(filter)): number {
    if (isEmptyFilter(filter)) return this.tables.rowCount
    const counted = aggregateCounted(filter)
    if (counted !== undefined && 'agent_id' in counted) {
      const sql = 'SELECT coalesce((SELECT event_count FROM agents WHERE agent_id = ?), 0)'
      return this.tables.number(sql, [counted.agent_id])
    }
    if (counted !== undefined) {
      return this.tables.number(
        "SELECT coalesce((SELECT count FROM action_counts WHERE field = 'action_type' AND value = ?), 0)",
        [counted.action_type],
      )
    }
    return this.tables.number(`SELECT count(*) FROM events ${where.sql}`, where.params)
  }

  async searchEvents(query: SearchQuery, page: Page, within: EventFilter = {}): Promise<PageResult<StoredEvent>> {
    const match = matchExpression(query.terms)
    if (match === undefined) return {total: 0, items: []}
    if (!isEmptyFilter(within)) return this.#searchWithin(match, page, within)
    const {total, indexes} = await this.search.search(match, page.limit, page.offset)
    this.tables.assertOpen()
    if (indexes.length === 0) return {total, items: []}
    const sql = `SELECT ${EVENT_JSON} FROM events WHERE "index" IN (SELECT value FROM json_each(?)) ORDER BY "index"`
    return {
      total,
      items: this.#db
        .prepare(sql)
        .texts([JSON.stringify(indexes)])
        .map(toEvent),
    }
  }

  /**
   * A search inside a bound key's agents: the search index holds no agent column, so every match's
   * index comes back and the events table keeps those inside the filter, counted and paged there.
   */
  async #searchWithin(match: string, page: Page, within: EventFilter): Promise<PageResult<StoredEvent>> {
    const {indexes} = await this.search.search(match, -1, 0)
    this.tables.assertOpen()
    const where = whereClause(within)
    const sql = `FROM events ${where.sql} AND "index" IN (SELECT value FROM json_each(?))`
    const params = [...where.params, JSON.stringify(indexes)]
    const total = this.tables.number(`SELECT count(*) ${sql}`, params)
    const items = this.#db
      .prepare(`SELECT ${EVENT_JSON} ${sql} ORDER BY "index" LIMIT ? OFFSET ?`)
      .texts([...params, page.limit, page.offset])
      .map(toEvent)
    return {total, items}
  }

  /** What the search index reads of the events in [from, to), SCAN_BATCH at most. */
  searchSources(from: number, to: number, columns: string): string[] {
    const sql = `SELECT ${columns} FROM events WHERE "index" >= ? AND "index" < ? ORDER BY "index" LIMIT ${SCAN_BATCH}`
    return this.#db.prepare(sql).texts([from, to])
  }

  async *scanEvents(options: ScanOptions): AsyncIterable<StoredEvent> {
    for await (const batch of this.#scan(EVENT_JSON, options, (rows) => rows.map(toEvent))) yield* batch
  }

  scanHashedEvents(options: ScanOptions): AsyncIterable<HashedBatch> {
    const filter = options.filter ?? {}
    const {nextIndex} = this.tables
    const expected = isEmptyFilter(filter)
      ? Math.min(options.toIndex ?? nextIndex, nextIndex) - (options.fromIndex ?? 0)
      : this.total(filter)
    // Rows stay text here, hex and times unformatted: the hashing thread decodes its own copy.
    const rows = this.#scan(SCAN_JSON, options, (texts) => texts, indexOfRowText)
    const plan = {threads: hashingThreads(), callerHashes: true, form: 'sqlite-scan'} as const
    return hashedBatches(rows, expected, undefined, plan, options.signatureKeys)
  }

  scanEventHeaders(options: ScanOptions): AsyncIterable<EventHeader[]> {
    const labels = new LabelsCache()
    // The fast text form, unless a row of a hand-edited file does not fit it: then that batch again as JSON.
    return this.#scan(
      HEADER_TEXT,
      options,
      (rows, reread) => headersOfText(rows, labels) ?? reread(HEADER_JSON).map(toHeader),
    )
  }

  async eventHashes(fromIndex: number, toIndex: number | undefined): Promise<string[]> {
    const hashes: string[] = []
    for (const {from, to, count, hex} of this.#hashChunks(fromIndex, toIndex)) {
      if (hex === '') {
        // A hash that is not a 32-byte BLOB (a hand-edited file): the chunk's hashes one by one.
        const sql = `SELECT ${hashText('hash')} FROM events WHERE "index" >= ? AND "index" < ? ORDER BY "index"`
        for (const hash of this.#db.prepare(sql).texts([from, to])) hashes.push(hash)
      } else for (let i = 0; i < count; i++) hashes.push(hex.slice(i * 64, i * 64 + 64))
    }
    return hashes
  }

  async *eventHashChunks(): AsyncIterable<{count: number; hex: string}> {
    for (const {count, hex} of this.#hashChunks(0, undefined)) yield {count, hex}
  }

  chainHeads(): {heads: AgentHead[]; size: number} {
    // Both read in this one synchronous step: appends change them together, in one transaction.
    return {heads: this.agentSummaries().map(toHead), size: this.tables.nextIndex}
  }

  agentSummaries(): AgentSummary[] {
    return this.#db.prepare(AGENTS_JSON).texts().map(toSummary)
  }

  stats(recentSince: string): Omit<StoreStats, 'storage'> {
    const {tables} = this
    return {
      total_events: tables.rowCount,
      events_last_24h: tables.recorded.countSince(recentSince, tables.nextIndex, {
        firstFrom: (index) => {
          const sql = `SELECT json_array("index", ${timeText('recorded_at')}) FROM events
            WHERE "index" >= ? ORDER BY "index" LIMIT 1`
          const [row] = this.#db.prepare(sql).texts([index])
          return row === undefined ? undefined : (JSON.parse(row) as [number, string])
        },
        // Without gaps (rows deleted by hand) the count is plain arithmetic.
        countFrom: (index) =>
          tables.rowCount === tables.nextIndex
            ? tables.nextIndex - index
            : tables.number('SELECT count(*) FROM events WHERE "index" >= ?', [index]),
        countScanning: (since) =>
          tables.number(`SELECT count(*) FROM events WHERE ${timeText('recorded_at')} >= ?`, [since]),
      }),
      // An agent's latest recorded_at is recent exactly when one of its events is.
      active_agents: tables.number('SELECT count(*) FROM agents WHERE last_recorded_at >= ?', [recentSince]),
      total_agents: tables.number('SELECT count(*) FROM agents'),
      ...toCounts(this.#db.prepare(COUNTS_JSON).texts()),
    }
  }

  listTimestamps(): TimestampRecord[] {
    return this.#db.prepare(`SELECT ${TIMESTAMP_JSON} FROM timestamps ORDER BY rowid`).texts().map(toTimestamp)
  }

  listCheckpoints(): CheckpointRecord[] {
    return this.#db.prepare(`SELECT ${CHECKPOINT_JSON} FROM checkpoints ORDER BY rowid`).texts().map(toCheckpoint)
  }

  latestCheckpoint(): CheckpointRecord | undefined {
    const [row] = this.#db.prepare(`SELECT ${CHECKPOINT_JSON} FROM checkpoints ORDER BY rowid DESC LIMIT 1`).texts()
    return row === undefined ? undefined : toCheckpoint(row)
  }

  /**
   * The hashes of [fromIndex, toIndex) in chunks of HASH_CHUNK indexes, each the chunk's 32-byte
   * BLOBs joined and turned into hex once: hex() and lower() per row were most of the time to open a
   * large store. group_concat appends a BLOB's bytes as they are (sqlite.org/lang_aggfunc.html
   * #group_concat reads it as text, which keeps its length). Any other value (a hand-edited file)
   * would shift the hashes after it: then the chunk's hex is empty.
   */
  *#hashChunks(
    fromIndex: number,
    toIndex: number | undefined,
  ): Iterable<{from: number; to: number; count: number; hex: string}> {
    const sql = `SELECT count(*) || ' ' || CASE WHEN sum(typeof(hash) = 'blob' AND length(hash) = 32) = count(*)
      THEN lower(hex(group_concat(hash, ''))) ELSE '' END
      FROM (SELECT hash FROM events WHERE "index" >= ? AND "index" < ? ORDER BY "index")`
    for (let from = fromIndex; ; from += HASH_CHUNK) {
      const end = Math.min(toIndex ?? this.tables.nextIndex, this.tables.nextIndex)
      if (from >= end) return
      this.tables.assertOpen()
      const to = Math.min(from + HASH_CHUNK, end)
      const [row = '0 '] = this.#db.prepare(sql).texts([from, to])
      const space = row.indexOf(' ')
      const count = Number(row.slice(0, space))
      if (count > 0) yield {from, to, count, hex: row.slice(space + 1)}
    }
  }

  /** Batches of rows in index order, SCAN_BATCH per query; `indexOf` tells a decoded row's index. */
  async *#scan<T>(
    columns: string,
    options: ScanOptions,
    decode: (rows: string[], reread: (columns: string) => string[]) => T[],
    indexOf: (item: T) => number = (item) => (item as {index: number}).index,
  ): AsyncIterable<T[]> {
    // No lower bound unless asked: a row under a negative index (put there outside the service)
    // is read too, first, so that a full scan's checks see it.
    let from = options.fromIndex
    const limit = Math.max(1, Math.min(options.batchSize ?? SCAN_BATCH, SCAN_BATCH))
    for (;;) {
      this.tables.assertOpen()
      const where = whereClause(options.filter, {fromIndex: from, toIndex: options.toIndex})
      const query = (selected: string) =>
        this.#db
          .prepare(`SELECT ${selected} FROM events ${where.sql} ORDER BY "index" LIMIT ${limit}`)
          .texts(where.params)
      const rows = query(columns)
      const batch = decode(rows, query)
      if (batch.length > 0) {
        from = indexOf(batch[batch.length - 1]!) + 1
        yield batch
      }
      if (rows.length < limit) return
      // Let requests, timers and signals in between batches: an async generator whose values are
      // ready never returns to the event loop, so a scan of a million events (the chain check
      // after start-up) would hold the server for half a minute.
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }
}
