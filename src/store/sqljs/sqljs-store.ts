/**
 * The durable sql.js store (docs/design.md): SQLite in memory, a write-ahead journal for
 * durability, snapshots to `events.sqlite`, one owning process per data directory.
 *
 * appendEvents: journal record written and fsynced, then inserted into SQLite in one transaction,
 * then resolved: an acknowledged event survives kill -9. Journal writes (events and timestamps)
 * and snapshot switches run one at a time through one queue. Reads are synchronous SQLite queries
 * between those steps, so they never see half of an append.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import {AuditError} from '../../core/errors.js'
import type {
  AgentHead,
  AgentSummary,
  EventFilter,
  EventHeader,
  Page,
  PageResult,
  StorageUsage,
  StoreStats,
  StoredEvent,
  TimestampRecord,
  CheckpointRecord,
} from '../../core/types.js'
import {
  AGENTS_JSON,
  AGGREGATES_SCHEMA,
  COUNTS_JSON,
  REBUILD_AGGREGATES,
  RECOUNT_ACTIONS,
  toCounts,
  toHead,
  toSummary,
  UPSERT_AGENT,
  UPSERT_COUNT,
} from './aggregates.js'
import {aggregateRows} from '../aggregates.js'
import {fileOps, type FileOps} from './file-ops.js'
import {aggregateCounted, isEmptyFilter} from '../filters.js'
import {whereClause} from './where.js'
import {encodeRecord, Journal, listJournals} from './journal.js'
import {prepareDataDir} from './data-dir.js'
import {acquireLock, type DirectoryLock} from './lock.js'
import {replayJournals} from './replay.js'
import {collectGarbage} from './memory.js'
import {RecordedOrder} from './recent.js'
import {hashText, MIGRATE_HASHES, MIGRATE_LABELS, MIGRATE_TIMES, retypeTimes, timeText} from './schema.js'
import {
  EVENT_JSON,
  eventRow,
  HEADER_JSON,
  HEADER_TEXT,
  headersOfText,
  LabelsCache,
  INSERT_EVENT,
  INSERT_LABEL,
  INSERT_TIMESTAMP,
  labelRows,
  SCHEMA,
  SCHEMA_VERSION,
  addedColumns,
  searchSource,
  TIMESTAMP_JSON,
  timestampRow,
  toTimestamp,
} from './schema.js'
import {indexOfRowText, toEvent, toHeader} from '../event-row.js'
import {hashedBatches, type HashedBatch} from '../hashed-scan.js'
import {matchExpression, SEARCH_SOURCE_JSON} from './search-text.js'
import {MAX_BACKLOG, SearchIndex} from './search-index.js'
import {randomBytes} from '../../core/crypto.js'
import {finishSnapshot, readSnapshot, SNAPSHOT_FILE, writeSnapshotData} from './snapshot.js'
import {SqliteDatabase, type Param} from './database.js'
import {
  capacityBytes,
  DEFAULT_CAPACITY_BYTES,
  storageFullError,
  TIMESTAMP_RESERVE_BYTES,
  usage,
  warningMessage,
} from './capacity.js'
import {CHECKPOINT_JSON, checkpointRow, INSERT_CHECKPOINT, toCheckpoint} from './schema.js'
import {readOrCreateLogKey} from './log-key.js'
import type {
  ErasureCandidate,
  ErasurePlan,
  ErasureSelection,
  ErasureTaken,
  EventStore,
  ScanOptions,
  SearchQuery,
} from '../store.js'
import {
  addPending,
  ERASE_BATCH,
  erasableIndexes,
  ERASURE_SCHEMA,
  erasureCandidates,
  eraseRows,
  pendingErasures,
  removePending,
  type ErasedBatch,
  type PendingErasure,
} from './erasure.js'
import type {PayloadMemberName} from '../../core/types.js'
import {KeyState} from '../key-state.js'
import {KEYS_AGENT} from '../../core/signature/index.js'
import {
  requestedAgents,
  requestedIds,
  sequenceEvents,
  type SequenceRequest,
  type SequenceResult,
} from '../../core/event/index.js'

export interface SqlJsStoreOptions {
  dataDir: string
  /**
   * Snapshot in the background once this many events were journalled since the last one (100,000),
   * or a quarter of the events stored, whichever is more.
   */
  snapshotEveryEvents?: number
  /** ... or once the journal has this many bytes (64 MiB), or a quarter of the database's, whichever is more. */
  snapshotEveryBytes?: number
  /** ... or this often when anything changed (10 minutes; 0 turns the timer off). */
  snapshotIntervalMs?: number
  /** File system calls to replace, for fault injection. */
  fileOps?: Partial<FileOps>
  /** Make the data directory when it does not exist (true); false: a DataDirError instead. */
  create?: boolean
  /**
   * The enforced capacity in bytes of database (capacity.ts; default 2 GiB, or the environment's
   * AUDIT_TRAIL_STORE_CAPACITY); past it appends are refused with storage_full.
   */
  capacityBytes?: number
  /** Where the warning above WARNING_FRACTION of the capacity goes (default: a line on stderr). */
  warn?: (message: string) => void
}

/** Events per query when streaming (scanEvents) and hashes per query (eventHashes). */
const SCAN_BATCH = 5000
const HASH_BATCH = 100_000
/** Hashes per joined string of eventHashChunks (4 MiB of hex). */
const HASH_CHUNK = 65_536
/** Database size (pages of 4 KiB) from which old in-memory copies are collected at once. */
const COLLECT_FROM_PAGES = 16_384
const COLLECT_FROM_BYTES = COLLECT_FROM_PAGES * 4096
/** A snapshot is due once the journal since the last one passes this fraction of the database. */
const SNAPSHOT_FRACTION = 0.25
/** Rows converted per transaction by the schema 2 migration; the largest database compacted after it. */
const MIGRATE_BATCH = 50_000
const VACUUM_UP_TO_BYTES = 512 * 1024 * 1024
/** The heads of the agents named by a JSON array. */
const HEADS_OF_JSON =
  'SELECT json_array(agent_id, last_sequence, head_hash) FROM agents WHERE agent_id IN (SELECT value FROM json_each(?))'
/** After a failed background snapshot, wait this long before trying again. */
const SNAPSHOT_RETRY_MS = 60_000

export async function openSqlJsStore(options: SqlJsStoreOptions): Promise<SqlJsStore> {
  const dir = path.resolve(options.dataDir)
  const capacity = capacityBytes(options.capacityBytes)
  prepareDataDir(dir, options.create ?? true)
  const lock = acquireLock(dir)
  let db: SqliteDatabase | undefined
  try {
    const snapshot = readSnapshot(dir)
    db = await SqliteDatabase.open(snapshot)
    db.exec(SCHEMA + AGGREGATES_SCHEMA)
    const store = new SqlJsStore({...options, capacityBytes: capacity}, dir, lock, db, fileOps(options.fileOps))
    await store.recover(snapshot !== undefined)
    // sql.js copied the file into its own memory: let the file's bytes go now, not some time later.
    if ((snapshot?.length ?? 0) >= COLLECT_FROM_BYTES) collectGarbage()
    return store
  } catch (error) {
    db?.close()
    lock.release()
    throw error
  }
}

export class SqlJsStore implements EventStore {
  #journal!: Journal
  #nextIndex = 0
  #rowCount = 0
  /**
   * The events the recorded heads account for: the sum of every agent's last sequence (sequences
   * run 1..n). Equal to #rowCount unless events were added or removed outside the service.
   */
  #headsTotal = 0
  #queue: Promise<unknown> = Promise.resolve()
  /** Snapshots run one after the other (they share the temporary file). */
  #snapshots: Promise<unknown> = Promise.resolve()
  #backgroundPending = false
  #retrySnapshotAt = 0
  #since = {events: 0, bytes: 0, changed: false}
  #timer: NodeJS.Timeout | undefined
  #closed = false
  /** Database pages at the last forced garbage collection (see memory.ts). */
  #pagesAtCollection = 0
  #recorded = new RecordedOrder('', true)
  readonly #keys = new KeyState()
  readonly #everyEvents: number
  readonly #everyBytes: number
  readonly #intervalMs: number
  /** The text index of searchEvents, kept in a thread of its own (search-index.ts). */
  readonly #search: SearchIndex
  readonly #capacity: number
  readonly #warn: (message: string) => void
  /** The database's size (pages times page size), measured after every insert. */
  #usedBytes = 0
  #pageSize = 4096
  #warned = false

  /** Use openSqlJsStore. */
  constructor(
    options: SqlJsStoreOptions,
    readonly dataDir: string,
    private readonly lock: DirectoryLock,
    private readonly db: SqliteDatabase,
    private readonly ops: FileOps,
  ) {
    this.#everyEvents = options.snapshotEveryEvents ?? 100_000
    this.#everyBytes = options.snapshotEveryBytes ?? 64 * 1024 * 1024
    this.#intervalMs = options.snapshotIntervalMs ?? 10 * 60 * 1000
    this.#capacity = options.capacityBytes ?? DEFAULT_CAPACITY_BYTES
    this.#warn = options.warn ?? ((message) => process.stderr.write(`audit-trail: ${message}\n`))
    this.#search = new SearchIndex(dataDir, {
      storeId: () => this.#meta('store_id') ?? '',
      count: () => this.#nextIndex,
      sourcesJson: (from, to) => {
        this.#assertOpen()
        const sql =
          `SELECT ${SEARCH_SOURCE_JSON} FROM events WHERE "index" >= ? AND "index" < ? ORDER BY "index" LIMIT ` +
          `${SCAN_BATCH}`
        return this.db.prepare(sql).texts([from, to])
      },
      epoch: () => this.#erasureEpoch(),
    })
  }

  /** Replays the journals into the loaded snapshot and starts a fresh journal generation. */
  async recover(hadSnapshot: boolean): Promise<void> {
    this.#pageSize = this.#number('PRAGMA page_size')
    // Once, for files of an earlier layout: then compacted, since the rows shrank in place.
    const version = Number(this.#meta('schema_version') ?? '1')
    const upgraded = version < Number(SCHEMA_VERSION)
    if (upgraded) this.#migrate(version)
    this.#setMeta('schema_version', SCHEMA_VERSION)
    // Names this store for its search index (search.sqlite belongs to the events.sqlite beside it).
    if (this.#meta('store_id') === undefined) this.#setMeta('store_id', randomBytes(16).toString('hex'))
    // Files written before the search index moved to search.sqlite hold it in events.sqlite.
    const migrated = this.#number("SELECT count(*) FROM sqlite_master WHERE name = 'events_fts'") > 0
    if (migrated) this.db.exec('DROP TABLE events_fts')
    // Files written before `timestamps reset` existed lack the column of its reason.
    const resetColumn = "SELECT count(*) FROM pragma_table_info('timestamps') WHERE name = 'reset_reason'"
    const resettable = this.#number(resetColumn) === 1
    if (!resettable) this.db.exec('ALTER TABLE timestamps ADD COLUMN reset_reason TEXT')
    // Files written before a member of the row existed (schema 4) lack its column: NULL for every old event.
    const present = new Set(this.db.prepare("SELECT name FROM pragma_table_info('events')").texts())
    const added = addedColumns(present)
    for (const statement of added) this.db.exec(statement)
    this.db.exec(ERASURE_SCHEMA)
    this.#nextIndex = this.#number('SELECT coalesce(max("index") + 1, 0) FROM events')
    this.#rowCount = this.#number('SELECT count(*) FROM events')
    // A rebuilt or recounted table is written by the snapshot below, not rebuilt at every start.
    let repaired = true
    if (this.#rowCount > 0 && this.#number('SELECT count(*) FROM agents') === 0) {
      this.db.transaction(() => this.db.exec(REBUILD_AGGREGATES))
    } else if (!this.#countsCover(this.#rowCount)) {
      // The counts of /v1/stats are derived data (unlike the agents table's heads, which chain
      // verification compares the events with): counts that do not add up to the events are
      // recounted rather than served.
      this.db.transaction(() => this.db.exec(RECOUNT_ACTIONS))
    } else {
      repaired = false
    }
    this.#headsTotal = this.#number('SELECT coalesce(sum(last_sequence), 0) FROM agents')
    const latestSql = `SELECT ${timeText('recorded_at')} FROM events ORDER BY "index" DESC LIMIT 1`
    const [latest] = this.db.prepare(latestSql).texts()
    // A file without the mark (not written by this store) gets the slow but always right count.
    const order = this.#meta('recorded_at_order') ?? (this.#rowCount === 0 ? 'ascending' : 'unordered')
    this.#recorded = new RecordedOrder(latest ?? '', order === 'ascending')
    this.#setMeta('recorded_at_order', order)
    const firstGeneration = Number(this.#meta('journal_generation') ?? 1)
    const replayed = replayJournals(this.dataDir, firstGeneration, {
      nextIndex: () => this.#nextIndex,
      insertEvents: (events) => this.#afterInsert(this.#insertEvents(events)),
      insertTimestamp: (record) => this.#insertTimestamp(record),
      insertCheckpoint: (record) => this.#insertCheckpoint(record),
      addCosignatures: (treeSize, lines) => this.#addCosignatures(treeSize, lines),
      addErasure: (pending) => addPending(this.db, pending),
    })
    this.#journal = await Journal.create(this.ops, this.dataDir, replayed.lastGeneration + 1)
    this.#measure()
    this.#since.changed =
      replayed.records > 0 || !hadSnapshot || migrated || !resettable || repaired || upgraded || added.length > 0
    if (this.#since.changed) this.#snapshotInBackground()
    if (this.#intervalMs > 0) {
      this.#timer = setInterval(() => this.#since.changed && this.#snapshotInBackground(), this.#intervalMs)
      this.#timer.unref()
    }
    // An erasure cut short: completed now, or dropped when its event was never recorded.
    for (const pending of pendingErasures(this.db)) {
      const event = await this.getEvent(pending.intent.id)
      if (event === undefined) removePending(this.db, pending.intent.id)
      else await this.#applyErasure(pending)
    }
  }

  async count(): Promise<number> {
    this.#assertOpen()
    return this.#nextIndex
  }

  async recordEvents(requests: SequenceRequest[]): Promise<SequenceResult> {
    this.#assertOpen()
    const result = await this.#serial(async () => {
      const heads = this.#heads(requestedAgents(requests))
      const sequenced = sequenceEvents(requests, {
        nextIndex: this.#nextIndex,
        heads,
        existing: await this.getEvents(requestedIds(requests)),
        keys: await this.#keys.upTo(heads, async (after) => this.#agentEventsAfter(KEYS_AGENT, after)),
      })
      if (sequenced.recorded.length > 0)
        await this.#write(sequenced.recorded, encodeRecord({events: sequenced.recorded}))
      return sequenced
    })
    if (this.#search.backlog > MAX_BACKLOG) await this.#search.indexed()
    return result
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    this.#assertOpen()
    if (events.length === 0) return
    const record = encodeRecord({events})
    await this.#serial(() => this.#write(events, record))
    // Should the search thread fall this far behind, let it catch up before taking more.
    if (this.#search.backlog > MAX_BACKLOG) await this.#search.indexed()
  }

  /** An agent's events after a sequence, in sequence order (the key events sequencing catches up on). */
  #agentEventsAfter(agentId: string, sequence: number): StoredEvent[] {
    const sql = `SELECT ${EVENT_JSON} FROM events WHERE agent_id = ? AND sequence > ? ORDER BY sequence`
    return this.db.prepare(sql).texts([agentId, sequence]).map(toEvent)
  }

  /** The recorded heads of some agents (the agents table changes with every append). */
  #heads(agentIds: string[]): Map<string, AgentHead> {
    const heads = new Map<string, AgentHead>()
    for (const row of this.db.prepare(HEADS_OF_JSON).texts([JSON.stringify(agentIds)])) {
      const [agent_id, last_sequence, head_hash] = JSON.parse(row) as [string, number, string]
      heads.set(agent_id, {agent_id, last_sequence, head_hash})
    }
    return heads
  }

  /** Journals and inserts sequenced events; runs in #serial. */
  async #write(events: StoredEvent[], record: Buffer): Promise<void> {
    // Refused before anything is written: the record would take the database past its capacity.
    if (this.#usedBytes + record.length > this.#capacity) throw storageFullError(this.#usedBytes, this.#capacity)
    // Indexes run 0..n-1 as the Merkle leaves do; a file whose rows no longer do (edited while
    // the service was stopped) cannot take the next index without lying about the ones before.
    if (this.#rowCount !== this.#nextIndex) {
      throw new AuditError(
        'storage_unavailable',
        `nothing was recorded: ${SNAPSHOT_FILE} holds ${this.#rowCount} events under indexes up to ` +
          `${this.#nextIndex - 1}, so events were removed or renumbered outside the service (audit-trail verify ` +
          `shows where)`,
      )
    }
    // Likewise when the chains no longer end at their recorded heads: the next sequence of an
    // agent would follow a head that is not the chain's.
    if (this.#rowCount !== this.#headsTotal) {
      throw new AuditError(
        'storage_unavailable',
        `nothing was recorded: ${SNAPSHOT_FILE} holds ${this.#rowCount} events where the chain heads the service ` +
          `recorded account for ${this.#headsTotal}, so events were added or removed outside the service ` +
          `(audit-trail verify shows where)`,
      )
    }
    events.forEach((event, i) => {
      if (event.index !== this.#nextIndex + i) {
        throw new AuditError('internal_error', `event index ${event.index} given where ${this.#nextIndex + i} is next`)
      }
    })
    const offset = await this.#appendRecord(record)
    let rows: Param[][]
    try {
      rows = this.#insertEvents(events)
    } catch (error) {
      // Not recorded after all: take the record out of the journal again.
      await this.#withdraw(offset)
      // The service gave the events the next sequences after the heads it recorded, and ids it
      // checked: a stored event already holding one was put there outside the service (in a
      // way the counts above do not show, such as one event removed and another added).
      if (/UNIQUE constraint failed/.test((error as Error).message)) {
        throw new AuditError(
          'storage_unavailable',
          `nothing was recorded: ${SNAPSHOT_FILE} already holds an event with the agent and sequence (or the id) ` +
            `the service gave a new one, so events were added outside the service (audit-trail verify shows where)`,
          {cause: error},
        )
      }
      throw new AuditError('internal_error', 'the events could not be stored', {cause: error})
    }
    // Committed and journalled: from here on nothing may undo the journal record.
    this.#afterInsert(rows)
    this.#journalled(events.length, record.length)
  }

  async getEvent(id: string): Promise<StoredEvent | undefined> {
    this.#assertOpen()
    const [row] = this.db.prepare(`SELECT ${EVENT_JSON} FROM events WHERE id = ?`).texts([id])
    return row === undefined ? undefined : toEvent(row)
  }

  async getEvents(ids: string[]): Promise<Map<string, StoredEvent>> {
    this.#assertOpen()
    const found = new Map<string, StoredEvent>()
    if (ids.length === 0) return found
    const sql = `SELECT ${EVENT_JSON} FROM events WHERE id IN (SELECT value FROM json_each(?))`
    for (const row of this.db.prepare(sql).texts([JSON.stringify(ids)])) {
      const event = toEvent(row)
      found.set(event.id, event)
    }
    return found
  }

  async queryEvents(filter: EventFilter, page: Page): Promise<PageResult<StoredEvent>> {
    this.#assertOpen()
    const where = whereClause(filter)
    const total = this.#total(filter, where)
    const sql = `SELECT ${EVENT_JSON} FROM events ${where.sql} ORDER BY "index" LIMIT ? OFFSET ?`
    const items = this.db
      .prepare(sql)
      .texts([...where.params, page.limit, page.offset])
      .map(toEvent)
    return {total, items}
  }

  async countEvents(filter: EventFilter): Promise<number> {
    this.#assertOpen()
    return this.#total(filter, whereClause(filter))
  }

  /**
   * The number of events matching a filter. Without one, or with only an agent or only an action
   * type, the aggregate tables kept with every append answer at once (the same numbers as
   * /v1/agents and /v1/stats); counting an agent's 20,000 index entries cost milliseconds a query.
   */
  #total(filter: EventFilter, where: {sql: string; params: Param[]}): number {
    if (isEmptyFilter(filter)) return this.#rowCount
    const counted = aggregateCounted(filter)
    if (counted !== undefined && 'agent_id' in counted)
      return this.#number('SELECT coalesce((SELECT event_count FROM agents WHERE agent_id = ?), 0)', [counted.agent_id])
    if (counted !== undefined) {
      return this.#number(
        "SELECT coalesce((SELECT count FROM action_counts WHERE field = 'action_type' AND value = ?), 0)",
        [counted.action_type],
      )
    }
    return this.#number(`SELECT count(*) FROM events ${where.sql}`, where.params)
  }

  async searchEvents(query: SearchQuery, page: Page): Promise<PageResult<StoredEvent>> {
    this.#assertOpen()
    const match = matchExpression(query.terms)
    if (match === undefined) return {total: 0, items: []}
    const {total, indexes} = await this.#search.search(match, page.limit, page.offset)
    this.#assertOpen()
    if (indexes.length === 0) return {total, items: []}
    const sql = `SELECT ${EVENT_JSON} FROM events WHERE "index" IN (SELECT value FROM json_each(?)) ORDER BY "index"`
    return {
      total,
      items: this.db
        .prepare(sql)
        .texts([JSON.stringify(indexes)])
        .map(toEvent),
    }
  }

  /** Opens the search index now and feeds it whatever it lacks, rather than at the first search. */
  prepareSearch(): Promise<void> {
    this.#assertOpen()
    return this.#search.prepare()
  }

  async *scanEvents(options: ScanOptions = {}): AsyncIterable<StoredEvent> {
    for await (const batch of this.#scan(EVENT_JSON, options, (rows) => rows.map(toEvent))) yield* batch
  }

  scanHashedEvents(options: ScanOptions = {}): AsyncIterable<HashedBatch> {
    this.#assertOpen()
    const filter = options.filter ?? {}
    const expected = isEmptyFilter(filter)
      ? Math.min(options.toIndex ?? this.#nextIndex, this.#nextIndex) - (options.fromIndex ?? 0)
      : this.#total(filter, whereClause(filter))
    // Rows stay text here (the hashing thread decodes its own copy).
    const rows = this.#scan(EVENT_JSON, options, (texts) => texts, indexOfRowText)
    return hashedBatches(rows, expected, undefined, undefined, options.signatureKeys)
  }

  scanEventHeaders(options: ScanOptions = {}): AsyncIterable<EventHeader[]> {
    const labels = new LabelsCache()
    // The fast text form, unless a row of a hand-edited file does not fit it: then that batch again as JSON.
    return this.#scan(
      HEADER_TEXT,
      options,
      (rows, reread) => headersOfText(rows, labels) ?? reread(HEADER_JSON).map(toHeader),
    )
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
      this.#assertOpen()
      const where = whereClause(options.filter, {fromIndex: from, toIndex: options.toIndex})
      const query = (selected: string) =>
        this.db
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

  async eventHashes(fromIndex = 0, toIndex?: number): Promise<string[]> {
    this.#assertOpen()
    const end = Math.min(toIndex ?? this.#nextIndex, this.#nextIndex)
    const sql = `SELECT ${hashText('hash')} FROM events WHERE "index" >= ? AND "index" < ? ORDER BY "index"`
    const hashes: string[] = []
    for (let start = fromIndex; start < end; start += HASH_BATCH) {
      for (const hash of this.db.prepare(sql).texts([start, Math.min(start + HASH_BATCH, end)])) hashes.push(hash)
    }
    return hashes
  }

  async *eventHashChunks(): AsyncIterable<{count: number; hex: string}> {
    // The 32-byte BLOBs joined first and turned into hex once per chunk: hex() and lower() per row
    // were most of the time to open a large store. group_concat appends a BLOB's bytes as they are
    // (sqlite.org/lang_aggfunc.html#group_concat reads it as text, which keeps its length). Any other
    // value (a hand-edited file) would shift the hashes after it: then the chunk is given empty, so
    // that the caller reads the hashes one by one.
    const sql = `SELECT count(*) || ' ' || CASE WHEN sum(typeof(hash) = 'blob' AND length(hash) = 32) = count(*)
      THEN lower(hex(group_concat(hash, ''))) ELSE '' END
      FROM (SELECT hash FROM events WHERE "index" >= ? AND "index" < ? ORDER BY "index")`
    for (let start = 0; start < this.#nextIndex; start += HASH_CHUNK) {
      this.#assertOpen()
      const [row = '0 '] = this.db.prepare(sql).texts([start, Math.min(start + HASH_CHUNK, this.#nextIndex)])
      const space = row.indexOf(' ')
      const count = Number(row.slice(0, space))
      if (count > 0) yield {count, hex: row.slice(space + 1)}
    }
  }

  async agentHeads(): Promise<AgentHead[]> {
    return (await this.chainHeads()).heads
  }

  /** Whether action_counts holds, for each of its two fields, counts that add up to `events`. */
  #countsCover(events: number): boolean {
    const sums = this.db
      .prepare(
        "SELECT json_array(coalesce(sum(CASE WHEN field = 'action_type' THEN count END), 0), coalesce(sum(CASE " +
          "WHEN field = 'action_status' THEN count END), 0), count(*)) FROM action_counts",
      )
      .texts()
    const [types, statuses, rows] = JSON.parse(sums[0]!) as number[]
    return types === events && statuses === events && (events > 0 || rows === 0)
  }

  async chainHeads(): Promise<{heads: AgentHead[]; size: number}> {
    this.#assertOpen()
    // Both read in this one synchronous step: appends change them together, in one transaction.
    return {heads: this.db.prepare(AGENTS_JSON).texts().map(toSummary).map(toHead), size: this.#nextIndex}
  }

  async agentSummaries(): Promise<AgentSummary[]> {
    this.#assertOpen()
    return this.db.prepare(AGENTS_JSON).texts().map(toSummary)
  }

  async stats(recentSince: string): Promise<StoreStats> {
    this.#assertOpen()
    return {
      total_events: this.#rowCount,
      events_last_24h: this.#recorded.countSince(recentSince, this.#nextIndex, {
        firstFrom: (index) => {
          const sql = `SELECT json_array("index", ${timeText('recorded_at')}) FROM events
            WHERE "index" >= ? ORDER BY "index" LIMIT 1`
          const [row] = this.db.prepare(sql).texts([index])
          return row === undefined ? undefined : (JSON.parse(row) as [number, string])
        },
        // Without gaps (rows deleted by hand) the count is plain arithmetic.
        countFrom: (index) =>
          this.#rowCount === this.#nextIndex
            ? this.#nextIndex - index
            : this.#number('SELECT count(*) FROM events WHERE "index" >= ?', [index]),
        countScanning: (since) =>
          this.#number(`SELECT count(*) FROM events WHERE ${timeText('recorded_at')} >= ?`, [since]),
      }),
      // An agent's latest recorded_at is recent exactly when one of its events is.
      active_agents: this.#number('SELECT count(*) FROM agents WHERE last_recorded_at >= ?', [recentSince]),
      total_agents: this.#number('SELECT count(*) FROM agents'),
      ...toCounts(this.db.prepare(COUNTS_JSON).texts()),
      storage: this.storage(),
    }
  }

  async appendTimestamp(record: TimestampRecord): Promise<void> {
    this.#assertOpen()
    const line = encodeRecord({timestamp: record})
    await this.#serial(async () => {
      if (this.#usedBytes + line.length > this.#capacity + TIMESTAMP_RESERVE_BYTES) {
        throw storageFullError(this.#usedBytes, this.#capacity)
      }
      const offset = await this.#appendRecord(line)
      try {
        this.#insertTimestamp(record)
      } catch (error) {
        await this.#withdraw(offset)
        throw new AuditError('internal_error', 'the timestamp could not be stored', {cause: error})
      }
      this.#journalled(0, line.length)
    })
  }

  async erasureCandidates(
    selection: ErasureSelection,
    members: readonly PayloadMemberName[],
    erasableOnly?: boolean,
  ): Promise<ErasureCandidate[]> {
    this.#assertOpen()
    return erasureCandidates(this.db, selection, members, erasableOnly)
  }

  /** One erasure after the other: each plans on what the ones before it left. */
  #erasures: Promise<unknown> = Promise.resolve()

  erase(plan: () => Promise<ErasurePlan | undefined>): Promise<ErasureTaken | undefined> {
    this.#assertOpen()
    const run = this.#erasures.then(async () => {
      const planned = await plan()
      if (planned === undefined) return undefined
      const pending = {intent: planned.intent, epoch: this.#erasureEpoch() + 1}
      // Durable before the event: a crash from here on is completed on the next opening.
      const record = encodeRecord({erasure: pending})
      await this.#appendSmallRecord(record, () => addPending(this.db, pending), 'the erasure')
      let erasure: StoredEvent
      try {
        erasure = await planned.record()
      } catch (error) {
        removePending(this.db, pending.intent.id)
        throw error
      }
      return {erasure, ...(await this.#applyErasure(pending))}
    })
    this.#erasures = run.catch(() => undefined)
    return run
  }

  #erasureEpoch(): number {
    return Number(this.#meta('erasure_epoch') ?? 0)
  }

  /**
   * Erases batch by batch (each in the write queue, between appends), the search index along, then
   * writes the snapshot, which deletes the journals that held the values, and saves the index.
   */
  async #applyErasure({intent, epoch}: PendingErasure): Promise<{events: number; members: number}> {
    // The index is told before the store's epoch moves: it is opened, if need be, at the old one.
    this.#search.beginErasure(epoch - 1, epoch)
    this.#setMeta('erasure_epoch', String(epoch))
    const indexes = await this.#serial(async () => erasableIndexes(this.db, intent))
    let members = 0
    for (let at = 0; at < indexes.length; at += ERASE_BATCH) {
      const batch = indexes.slice(at, at + ERASE_BATCH)
      await this.#serial(async () => {
        this.#assertOpen()
        let erased: ErasedBatch = {members: 0, before: [], after: []}
        this.db.transaction(() => {
          erased = eraseRows(this.db, intent, batch)
        })
        members += erased.members
        this.#search.eraseBatch(erased.before, erased.after)
      })
    }
    removePending(this.db, intent.id)
    this.#since.changed = true
    const searched = this.#search.endErasure()
    try {
      await this.#snapshotInTurn()
    } finally {
      await searched
    }
    return {events: indexes.length, members}
  }

  async listTimestamps(): Promise<TimestampRecord[]> {
    this.#assertOpen()
    return this.db.prepare(`SELECT ${TIMESTAMP_JSON} FROM timestamps ORDER BY rowid`).texts().map(toTimestamp)
  }

  async appendCheckpoint(record: CheckpointRecord): Promise<void> {
    const line = encodeRecord({checkpoint: record})
    await this.#appendSmallRecord(line, () => this.#insertCheckpoint(record), 'the checkpoint')
  }

  async appendCosignatures(treeSize: number, lines: string[]): Promise<void> {
    this.#assertOpen()
    if (this.#checkpointRowid(treeSize) === undefined) {
      throw new AuditError('not_found', `no checkpoint of tree size ${treeSize}`)
    }
    const line = encodeRecord({cosignatures: {tree_size: treeSize, lines}})
    await this.#appendSmallRecord(line, () => this.#addCosignatures(treeSize, lines), 'the cosignatures')
  }

  async listCheckpoints(): Promise<CheckpointRecord[]> {
    this.#assertOpen()
    return this.db.prepare(`SELECT ${CHECKPOINT_JSON} FROM checkpoints ORDER BY rowid`).texts().map(toCheckpoint)
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    this.#assertOpen()
    const [row] = this.db.prepare(`SELECT ${CHECKPOINT_JSON} FROM checkpoints ORDER BY rowid DESC LIMIT 1`).texts()
    return row === undefined ? undefined : toCheckpoint(row)
  }

  async logKey(create: () => string): Promise<string> {
    this.#assertOpen()
    return readOrCreateLogKey(this.dataDir, create)
  }

  /**
   * Journals one small record (a checkpoint, cosignatures), then applies it; a record that cannot
   * be applied is withdrawn. Like a timestamp it may use the reserve above the capacity: signed
   * history must not stop because events filled the store.
   */
  async #appendSmallRecord(line: Buffer, apply: () => void, what: string): Promise<void> {
    this.#assertOpen()
    await this.#serial(async () => {
      if (this.#usedBytes + line.length > this.#capacity + TIMESTAMP_RESERVE_BYTES) {
        throw storageFullError(this.#usedBytes, this.#capacity)
      }
      const offset = await this.#appendRecord(line)
      try {
        apply()
      } catch (error) {
        await this.#withdraw(offset)
        throw new AuditError('internal_error', `${what} could not be stored`, {cause: error})
      }
      this.#journalled(0, line.length)
    })
  }

  #insertCheckpoint(record: CheckpointRecord): void {
    this.db.prepare(INSERT_CHECKPOINT).runRows([checkpointRow(record)])
  }

  #checkpointRowid(treeSize: number): number | undefined {
    const sql = 'SELECT rowid FROM checkpoints WHERE tree_size = ? ORDER BY rowid DESC LIMIT 1'
    const [row] = this.db.prepare(sql).texts([treeSize])
    return row === undefined ? undefined : Number(row)
  }

  #addCosignatures(treeSize: number, lines: string[]): void {
    const rowid = this.#checkpointRowid(treeSize)
    if (rowid === undefined) return
    const [current] = this.db.prepare('SELECT cosignatures FROM checkpoints WHERE rowid = ?').texts([rowid])
    const held = JSON.parse(current!) as string[]
    const merged = [...held, ...lines.filter((line) => !held.includes(line))]
    const update = this.db.prepare('UPDATE checkpoints SET cosignatures = ? WHERE rowid = ?')
    update.runRows([[JSON.stringify(merged), rowid]])
  }

  async snapshot(): Promise<void> {
    this.#assertOpen()
    await this.#snapshotInTurn()
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#timer)
    let failure: unknown
    try {
      await this.#queue
      // The search index is saved and let go first (its thread too, when large and no other store
      // uses it): the final snapshot holds the database twice (the live file and its export), and
      // the index's memory need not be alive beside them.
      await this.#search.close(this.#isLarge())
      await this.#snapshotInTurn()
    } catch (error) {
      failure = error
    }
    await this.#search.close()
    await this.#journal.close().catch(() => undefined)
    const large = this.#isLarge()
    this.db.close()
    this.lock.release()
    if (large) collectGarbage()
    if (failure !== undefined) {
      throw new AuditError(
        'storage_unavailable',
        'the final snapshot could not be written (the journal still holds every event)',
        {cause: failure},
      )
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new AuditError('storage_unavailable', 'the store is closed')
  }

  /** Runs journal writes and snapshot switches one at a time, in call order. */
  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task)
    this.#queue = run.catch(() => undefined)
    return run
  }

  #number(sql: string, params: Param[] = []): number {
    return Number(this.db.prepare(sql).texts(params)[0])
  }

  #meta(key: string): string | undefined {
    return this.db.prepare('SELECT value FROM store_meta WHERE key = ?').texts([key])[0]
  }

  #setMeta(key: string, value: string): void {
    this.db.prepare('INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)').runRows([[key, value]])
  }

  /**
   * Inserts the events in one transaction and moves the counts with it. Everything that can fail
   * runs before the COMMIT (the order mark included), so that a throw means nothing was stored.
   */
  #insertEvents(events: StoredEvent[]): Param[][] {
    const labels: Param[][] = []
    for (const event of events) labelRows(event, labels)
    const aggregates = aggregateRows(events)
    const rows = events.map(eventRow)
    const unordered = this.#recorded.wouldBreakOrder(events)
    this.db.transaction(() => {
      this.db.prepare(INSERT_EVENT).runRows(rows)
      if (labels.length > 0) this.db.prepare(INSERT_LABEL).runRows(labels)
      this.db.prepare(UPSERT_AGENT).runRows(aggregates.agents)
      this.db.prepare(UPSERT_COUNT).runRows(aggregates.counts)
      if (unordered) this.#setMeta('recorded_at_order', 'unordered')
    })
    // The counts move together, right after the commit (appends compare them).
    this.#nextIndex = events[events.length - 1]!.index + 1
    this.#rowCount += events.length
    this.#headsTotal += events.length
    this.#recorded.observe(events)
    return rows
  }

  /**
   * Schema 1 or 2 to 3 (schema.ts): the times' declared type, then the hashes (from 1) and times
   * in place, one transaction per MIGRATE_BATCH rows, since SQLite keeps the
   * rollback journal of a transaction in WebAssembly memory (2 GiB at most, the whole database
   * for one transaction over every row). Then VACUUM returns the space the rows gave up, where
   * the database is small enough for its copy to fit that memory too; a larger file keeps its size.
   */
  #migrate(version: number): void {
    this.db.transaction(() => {
      const [create] = this.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'").texts()
      if (create === undefined || retypeTimes(create) === create) return
      const cookie = this.#number('PRAGMA schema_version')
      this.db.exec('PRAGMA writable_schema = ON')
      const update = "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'events'"
      this.db.prepare(update).runRows([[retypeTimes(create)]])
      this.db.exec(`PRAGMA schema_version = ${cookie + 1}; PRAGMA writable_schema = OFF`)
    })
    const steps = version < 2 ? [MIGRATE_HASHES, MIGRATE_TIMES] : [MIGRATE_TIMES]
    const range = this.db.prepare('SELECT json_array(min("index"), max("index")) FROM events').texts()[0]!
    const [low, high] = JSON.parse(range) as [number | null, number | null]
    if (low !== null && high !== null) {
      for (let from = low; from <= high; from += MIGRATE_BATCH) {
        this.db.transaction(() => {
          for (const sql of steps) this.db.prepare(sql).runRows([[from, from + MIGRATE_BATCH]])
        })
      }
    }
    if (this.#number("SELECT count(*) FROM sqlite_master WHERE name = 'event_labels'") > 0) this.#migrateLabels()
    if (this.#pages() * this.#pageSize <= VACUUM_UP_TO_BYTES) {
      try {
        this.db.exec('VACUUM')
      } catch {
        // Compaction only: the migrated file is whole without it.
      }
    }
  }

  /**
   * Schema 2 to 3: the former label table, MIGRATE_BATCH rows a transaction in its key order (each
   * range ends at the row found by OFFSET, so no batch reads the rows before it), then dropped.
   */
  #migrateLabels(): void {
    const next = this.db.prepare(`SELECT json_array(key, value, event_index) FROM event_labels
      WHERE (key, value, event_index) > (?, ?, ?) ORDER BY key, value, event_index LIMIT 1 OFFSET ${MIGRATE_BATCH - 1}`)
    const last = this.db.prepare(`SELECT json_array(key, value, event_index) FROM event_labels
      ORDER BY key DESC, value DESC, event_index DESC LIMIT 1`)
    // Before every row: numbers sort before text in SQLite, so even a key edited into a number.
    let after: Param[] = [-Infinity, -Infinity, -Infinity]
    const [end] = last.texts()
    while (end !== undefined) {
      const [bound] = next.texts(after)
      const upTo = JSON.parse(bound ?? end) as Param[]
      this.db.transaction(() => {
        for (const sql of MIGRATE_LABELS) this.db.prepare(sql).runRows([[...after, ...upTo]])
      })
      if (bound === undefined) break
      after = upTo
    }
    this.db.exec('DROP TABLE event_labels')
  }

  /** What follows a committed insert; none of it is needed for the events to be stored. */
  #afterInsert(rows: Param[][]): void {
    this.#search.add(rows.map(searchSource))
    try {
      this.#measure()
      this.#collectAfterGrowth()
    } catch {
      // Only the capacity's measure and a memory optimisation: the next insert measures again.
    }
  }

  /** Measures the database and warns, once per run, when it passes the warning level. */
  #measure(): void {
    this.#usedBytes = this.#pages() * this.#pageSize
    const state = usage(this.#usedBytes, this.#capacity).state
    if (state !== 'ok' && !this.#warned) {
      this.#warned = true
      this.#warn(warningMessage(this.#usedBytes, this.#capacity))
    }
  }

  storage(): StorageUsage {
    return usage(this.#usedBytes, this.#capacity)
  }

  /** Appends a journal record; a failed append that could not be cut off is withdrawn by a cut. */
  async #appendRecord(record: Uint8Array): Promise<number> {
    const offset = this.#journal.size
    try {
      return await this.#journal.append(record)
    } catch (error) {
      if (this.#journal.dirty) await this.#cut(offset).catch(() => undefined)
      throw error
    }
  }

  /**
   * Takes a record the store refused back out of the journal: truncated, or, when that fails,
   * cut off by a new generation that says where the old one ends (journal.ts), so that replay
   * never applies it. When both fail the journal stays dirty and every append is refused until
   * the truncation succeeds (Journal.append tries it first).
   */
  async #withdraw(offset: number): Promise<void> {
    try {
      await this.#journal.truncate(offset)
    } catch {
      await this.#cut(offset).catch(() => undefined)
    }
  }

  async #cut(length: number): Promise<void> {
    const previous = this.#journal
    const next = await Journal.create(this.ops, this.dataDir, previous.generation + 1)
    try {
      await next.append(encodeRecord({cut: {generation: previous.generation, length}}))
    } catch (error) {
      await next.close().catch(() => undefined)
      await this.ops.unlink(next.file).catch(() => undefined)
      throw error
    }
    this.#journal = next
    await previous.close().catch(() => undefined)
  }

  /**
   * sql.js reallocates its in-memory file each time the database grows by 12.5 %; collect the old
   * copy then, rather than whenever V8 gets to it (see memory.ts).
   */
  #collectAfterGrowth(): void {
    const pages = this.#pages()
    // Below 64 MiB (of 4 KiB pages) a stale copy does not matter, and collecting costs milliseconds.
    if (pages > COLLECT_FROM_PAGES && pages > this.#pagesAtCollection * 1.1) {
      collectGarbage()
      this.#pagesAtCollection = pages
    }
  }

  #pages(): number {
    return this.#number('PRAGMA page_count')
  }

  /**
   * Whether the database is large enough for its copies to matter. A full collection costs time
   * in proportion to the whole heap, not to the database: for a small store it buys nothing.
   */
  #isLarge(): boolean {
    return this.#pages() > COLLECT_FROM_PAGES
  }

  #insertTimestamp(record: TimestampRecord): void {
    this.db.prepare(INSERT_TIMESTAMP).runRows([timestampRow(record)])
  }

  #journalled(events: number, bytes: number): void {
    this.#since.events += events
    this.#since.bytes += bytes
    this.#since.changed = true
    // Thresholds grow with the database, so that the snapshots of an N-event ingest (each a full
    // copy) add up to a constant times N rather than N squared; replay stays a fraction of the log.
    const due =
      this.#since.events >= Math.max(this.#everyEvents, SNAPSHOT_FRACTION * this.#rowCount) ||
      this.#since.bytes >= Math.max(this.#everyBytes, SNAPSHOT_FRACTION * this.#usedBytes)
    if (due && Date.now() >= this.#retrySnapshotAt) this.#snapshotInBackground()
  }

  /** Queues a snapshot, written when anything changed since the last one or none exists yet. */
  #snapshotInTurn(): Promise<void> {
    const needed = () => this.#since.changed || !fs.existsSync(path.join(this.dataDir, SNAPSHOT_FILE))
    const run = this.#snapshots.then(() => (needed() ? this.#writeSnapshot() : undefined))
    this.#snapshots = run.catch(() => undefined)
    return run
  }

  #snapshotInBackground(): void {
    if (this.#backgroundPending || this.#closed) return
    this.#backgroundPending = true
    this.#snapshotInTurn()
      .catch(() => {
        // The journal still holds everything; try again later rather than on every append.
        this.#retrySnapshotAt = Date.now() + SNAPSHOT_RETRY_MS
      })
      .finally(() => {
        this.#backgroundPending = false
      })
  }

  /**
   * Exports the database and, at that same moment, switches appends to a new journal generation,
   * so the snapshot holds exactly the generations before it. Older journals are deleted only once
   * the snapshot file is durable.
   *
   * Appends wait until the export's bytes are handed to the OS: the export is a full copy of the
   * database, and letting appends grow SQLite's in-memory file (which reallocates it) while that
   * copy is alive would briefly hold three copies. The fsyncs and the rename run without blocking.
   */
  async #writeSnapshot(): Promise<void> {
    const {fd, previous, generation} = await this.#serial(async () => {
      const next = await Journal.create(this.ops, this.dataDir, this.#journal.generation + 1)
      let bytes: Uint8Array | undefined
      const large = this.#isLarge()
      try {
        this.#setMeta('journal_generation', String(next.generation))
        if (large) collectGarbage()
        bytes = this.db.export()
      } catch (error) {
        await next.close()
        await this.ops.unlink(next.file)
        throw error
      }
      const previous = this.#journal
      this.#journal = next
      this.#since = {events: 0, bytes: 0, changed: false}
      try {
        const fd = await writeSnapshotData(this.ops, this.dataDir, bytes)
        return {fd, previous, generation: next.generation}
      } catch (error) {
        this.#since.changed = true
        throw error
      } finally {
        // Drops the last reference to the export so that the collection below can free it.
        // eslint-disable-next-line no-useless-assignment
        bytes = undefined
        if (large) collectGarbage()
      }
    })
    await previous.close().catch(() => undefined)
    // The search index is saved by its thread, as of this moment (a cache: failures are ignored).
    void this.#search.save()
    try {
      await finishSnapshot(this.ops, this.dataDir, fd)
    } catch (error) {
      this.#since.changed = true
      throw error
    }
    for (const journal of listJournals(this.dataDir)) {
      if (journal.generation < generation) await this.ops.unlink(journal.file).catch(() => undefined)
    }
  }
}
