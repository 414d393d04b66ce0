/**
 * The durable sql.js store (docs/design.md): SQLite in memory, a write-ahead journal for
 * durability, snapshots to `events.sqlite`, one owning process per data directory.
 *
 * appendEvents: journal record written and fsynced, then inserted into SQLite in one transaction, then
 * resolved: an acknowledged event survives kill -9. Journal writes and snapshot switches run one at
 * a time through one queue. Reads are synchronous SQLite queries between those, never half an append.
 */
import * as path from 'node:path'
import {AuditError} from '../../core/errors.js'
import {randomBytes} from '../../core/crypto.js'
import {requestedAgents, requestedIds, sequenceEvents} from '../../core/event/index.js'
import type {SequenceRequest, SequenceResult} from '../../core/event/index.js'
import {KEYS_AGENT} from '../../core/signature/index.js'
import type {
  AgentHead,
  AgentSummary,
  CheckpointRecord,
  EventFilter,
  EventHeader,
  Page,
  PageResult,
  PayloadMemberName,
  StorageUsage,
  StoreStats,
  StoredEvent,
  TimestampRecord,
} from '../../core/types.js'
import type {HashedBatch} from '../hashed-scan.js'
import {KeyState} from '../agent-key-state.js'
import type {ErasureCandidate, ErasurePlan, ErasureSelection, ErasureTaken, EventStore, ScanOptions} from '../store.js'
import type {SearchQuery} from '../../core/search/index.js'
import {AGGREGATES_SCHEMA} from './aggregates.js'
import {capacityBytes, DEFAULT_CAPACITY_BYTES} from './capacity.js'
import {prepareDataDir} from './data-dir.js'
import {SqliteDatabase, type Param} from './database.js'
import {addPending, erasureCandidates, Erasures} from './erasure.js'
import {fileOps, type FileOps} from './file-ops.js'
import {ForwardingFile} from './forwarding-file.js'
import {COLLECT_FROM_BYTES, Footprint} from './footprint.js'
import {encodeRecord} from './journal.js'
import {acquireLock, type DirectoryLock} from './lock.js'
import {readOrCreateLogKey} from './log-key.js'
import {collectGarbage} from './memory.js'
import {repairAggregates, upgradeLayout} from './migrations.js'
import {Reads} from './reads.js'
import {RecordedOrder} from './recent.js'
import {replayJournals} from './replay.js'
import {SCHEMA, searchSource, timeText} from './schema.js'
import {MAX_BACKLOG, SearchIndex} from './search-index.js'
import {SEARCH_SOURCE_JSON} from './search-text.js'
import {readSnapshot} from './snapshot-file.js'
import {Snapshots} from './snapshots.js'
import {Tables} from './tables.js'
import {TrailSeal} from './trail-file.js'
import {JournalWriter} from './writes.js'

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

export async function openSqlJsStore(options: SqlJsStoreOptions): Promise<SqlJsStore> {
  const dir = path.resolve(options.dataDir)
  const capacity = capacityBytes(options.capacityBytes)
  prepareDataDir(dir, options.create ?? true)
  const lock = acquireLock(dir)
  let db: SqliteDatabase | undefined
  try {
    const seal = await TrailSeal.open(dir)
    const snapshot = readSnapshot(dir)
    db = await SqliteDatabase.open(snapshot)
    db.exec(SCHEMA + AGGREGATES_SCHEMA)
    const store = new SqlJsStore({...options, capacityBytes: capacity}, dir, lock, db, fileOps(options.fileOps), seal)
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

/** The store's parts: the rows, their size, the journalled writes, snapshots, reads and erasures. */
export class SqlJsStore implements EventStore {
  readonly #tables: Tables
  readonly #footprint: Footprint
  readonly #writes: JournalWriter
  readonly #snapshots: Snapshots
  readonly #reads: Reads
  readonly #erasures: Erasures
  readonly #search: SearchIndex // the text index of searchEvents, in a thread of its own (search-index.ts)
  readonly #keys = new KeyState()

  /** Use openSqlJsStore. */
  constructor(
    options: SqlJsStoreOptions,
    readonly dataDir: string,
    private readonly lock: DirectoryLock,
    private readonly db: SqliteDatabase,
    ops: FileOps,
    private readonly trailSeal: TrailSeal,
    readonly forwarding = new ForwardingFile(dataDir, ops),
  ) {
    const tables = (this.#tables = new Tables(db))
    const warn = options.warn ?? ((message) => process.stderr.write(`audit-trail: ${message}\n`))
    this.#footprint = new Footprint(tables, options.capacityBytes ?? DEFAULT_CAPACITY_BYTES, warn)
    this.#search = new SearchIndex(dataDir, {
      storeId: () => tables.meta('store_id') ?? '',
      count: () => tables.nextIndex,
      sourcesJson: (from, to) => {
        tables.assertOpen()
        return this.#reads.searchSources(from, to, SEARCH_SOURCE_JSON)
      },
      epoch: () => tables.erasureEpoch(),
    })
    this.#writes = new JournalWriter(tables, this.#footprint, ops, dataDir, {
      afterInsert: (rows) => this.#afterInsert(rows),
      journalled: (events, bytes) => this.#snapshots.journalled(events, bytes),
    })
    this.#snapshots = new Snapshots(tables, this.#footprint, this.#writes, this.#search, ops, dataDir, {
      everyEvents: options.snapshotEveryEvents ?? 100_000,
      everyBytes: options.snapshotEveryBytes ?? 64 * 1024 * 1024,
      intervalMs: options.snapshotIntervalMs ?? 10 * 60 * 1000,
    })
    this.#reads = new Reads(tables, this.#search)
    this.#erasures = new Erasures(tables, this.#writes, this.#search, this.#snapshots)
  }

  /** Upgrades the file, replays the journals into it and starts a fresh journal generation. */
  async recover(hadSnapshot: boolean): Promise<void> {
    const tables = this.#tables
    const upgraded = upgradeLayout(tables, this.#footprint)
    // Names this store for its search index (search.sqlite belongs to the events.sqlite beside it).
    if (tables.meta('store_id') === undefined) tables.setMeta('store_id', randomBytes(16).toString('hex'))
    tables.nextIndex = tables.number('SELECT coalesce(max("index") + 1, 0) FROM events')
    tables.rowCount = tables.number('SELECT count(*) FROM events')
    // A rebuilt or recounted table is written by the snapshot below, not at every start.
    const repaired = repairAggregates(tables, tables.rowCount)
    tables.headsTotal = tables.number('SELECT coalesce(sum(last_sequence), 0) FROM agents')
    const latestSql = `SELECT ${timeText('recorded_at')} FROM events ORDER BY "index" DESC LIMIT 1`
    const [latest] = tables.db.prepare(latestSql).texts()
    // A file without the mark (not written by this store) gets the slow but always right count.
    const order = tables.meta('recorded_at_order') ?? (tables.rowCount === 0 ? 'ascending' : 'unordered')
    tables.recorded = new RecordedOrder(latest ?? '', order === 'ascending')
    tables.setMeta('recorded_at_order', order)
    const firstGeneration = Number(tables.meta('journal_generation') ?? 1)
    const replayed = replayJournals(this.dataDir, firstGeneration, {
      nextIndex: () => tables.nextIndex,
      insertEvents: (events) => this.#afterInsert(tables.insertEvents(events)),
      insertTimestamp: (record) => tables.insertTimestamp(record),
      insertCheckpoint: (record) => tables.insertCheckpoint(record),
      addCosignatures: (treeSize, lines) => tables.addCosignatures(treeSize, lines),
      addErasure: (pending) => addPending(tables.db, pending),
    })
    await this.#writes.start(replayed.lastGeneration + 1)
    this.#footprint.measure()
    this.#snapshots.start(replayed.records > 0 || !hadSnapshot || upgraded || repaired)
    await this.#erasures.completePending()
  }

  // Events: recording and reading.

  async count(): Promise<number> {
    this.#tables.assertOpen()
    return this.#tables.nextIndex
  }

  async recordEvents(requests: SequenceRequest[]): Promise<SequenceResult> {
    this.#tables.assertOpen()
    const result = await this.#writes.serial(async () => {
      this.trailSeal.assertOpen()
      const heads = this.#tables.heads(requestedAgents(requests))
      const sequenced = sequenceEvents(requests, {
        nextIndex: this.#tables.nextIndex,
        heads,
        existing: this.#reads.getEvents(requestedIds(requests)),
        keys: await this.#keys.upTo(heads, async (after) => this.#reads.agentEventsAfter(KEYS_AGENT, after)),
      })
      if (sequenced.recorded.length > 0)
        await this.#writes.writeEvents(sequenced.recorded, encodeRecord({events: sequenced.recorded}))
      return sequenced
    })
    await this.#searchCaughtUp()
    return result
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    this.#tables.assertOpen()
    if (events.length === 0) return
    const record = encodeRecord({events})
    await this.#writes.serial(() => this.#writes.writeEvents(events, record))
    await this.#searchCaughtUp()
  }

  async getEvent(id: string): Promise<StoredEvent | undefined> {
    this.#tables.assertOpen()
    return this.#reads.getEvent(id)
  }

  async getEvents(ids: string[]): Promise<Map<string, StoredEvent>> {
    this.#tables.assertOpen()
    return this.#reads.getEvents(ids)
  }

  async queryEvents(filter: EventFilter, page: Page): Promise<PageResult<StoredEvent>> {
    this.#tables.assertOpen()
    return this.#reads.queryEvents(filter, page)
  }

  async countEvents(filter: EventFilter): Promise<number> {
    this.#tables.assertOpen()
    return this.#reads.total(filter)
  }

  async searchEvents(query: SearchQuery, page: Page): Promise<PageResult<StoredEvent>> {
    this.#tables.assertOpen()
    return this.#reads.searchEvents(query, page)
  }

  /** Opens the search index now and feeds it whatever it lacks, rather than at the first search. */
  prepareSearch(): Promise<void> {
    this.#tables.assertOpen()
    return this.#search.prepare()
  }

  scanEvents(options: ScanOptions = {}): AsyncIterable<StoredEvent> {
    return this.#reads.scanEvents(options)
  }

  scanHashedEvents(options: ScanOptions = {}): AsyncIterable<HashedBatch> {
    this.#tables.assertOpen()
    return this.#reads.scanHashedEvents(options)
  }

  scanEventHeaders(options: ScanOptions = {}): AsyncIterable<EventHeader[]> {
    return this.#reads.scanEventHeaders(options)
  }

  async eventHashes(fromIndex = 0, toIndex?: number): Promise<string[]> {
    this.#tables.assertOpen()
    return this.#reads.eventHashes(fromIndex, toIndex)
  }

  eventHashChunks(): AsyncIterable<{count: number; hex: string}> {
    return this.#reads.eventHashChunks()
  }

  // Agents and statistics.

  async agentHeads(): Promise<AgentHead[]> {
    return (await this.chainHeads()).heads
  }

  async chainHeads(): Promise<{heads: AgentHead[]; size: number}> {
    this.#tables.assertOpen()
    return this.#reads.chainHeads()
  }

  async agentSummaries(): Promise<AgentSummary[]> {
    this.#tables.assertOpen()
    return this.#reads.agentSummaries()
  }

  async stats(recentSince: string): Promise<StoreStats> {
    this.#tables.assertOpen()
    return {...this.#reads.stats(recentSince), storage: this.storage()}
  }

  storage(): StorageUsage {
    return this.#footprint.storage()
  }

  // Signed history: timestamps, checkpoints, cosignatures, the log key.

  async appendTimestamp(record: TimestampRecord): Promise<void> {
    const line = encodeRecord({timestamp: record})
    await this.#writes.appendSmall(line, () => this.#tables.insertTimestamp(record), 'the timestamp')
  }

  async listTimestamps(): Promise<TimestampRecord[]> {
    this.#tables.assertOpen()
    return this.#reads.listTimestamps()
  }

  async appendCheckpoint(record: CheckpointRecord): Promise<void> {
    const line = encodeRecord({checkpoint: record})
    await this.#writes.appendSmall(line, () => this.#tables.insertCheckpoint(record), 'the checkpoint')
  }

  async appendCosignatures(treeSize: number, lines: string[]): Promise<void> {
    this.#tables.assertOpen()
    if (this.#tables.checkpointRowid(treeSize) === undefined) {
      throw new AuditError('not_found', `no checkpoint of tree size ${treeSize}`)
    }
    const line = encodeRecord({cosignatures: {tree_size: treeSize, lines}})
    await this.#writes.appendSmall(line, () => this.#tables.addCosignatures(treeSize, lines), 'the cosignatures')
  }

  async listCheckpoints(): Promise<CheckpointRecord[]> {
    this.#tables.assertOpen()
    return this.#reads.listCheckpoints()
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    this.#tables.assertOpen()
    return this.#reads.latestCheckpoint()
  }

  async logKey(create: () => string): Promise<string> {
    this.#tables.assertOpen()
    return readOrCreateLogKey(this.dataDir, create)
  }

  /** Seals the trail in the write queue, after every append queued before (docs/trails.md, Sealing). */
  seal(): Promise<boolean> {
    this.#tables.assertOpen()
    return this.#writes.serial(() => this.trailSeal.seal())
  }

  async sealed(): Promise<boolean> {
    return this.trailSeal.sealed
  }

  // Erasure.

  async erasureCandidates(
    selection: ErasureSelection,
    members: readonly PayloadMemberName[],
    erasableOnly?: boolean,
  ): Promise<ErasureCandidate[]> {
    this.#tables.assertOpen()
    return erasureCandidates(this.#tables.db, selection, members, erasableOnly)
  }

  erase(plan: () => Promise<ErasurePlan | undefined>): Promise<ErasureTaken | undefined> {
    this.#tables.assertOpen()
    return this.#erasures.erase(plan)
  }

  // Snapshots and closing.

  async snapshot(): Promise<void> {
    this.#tables.assertOpen()
    await this.#snapshots.inTurn()
  }

  async close(): Promise<void> {
    if (this.#tables.closed) return
    this.#tables.closed = true
    this.#snapshots.stop()
    let failure: unknown
    try {
      await this.#writes.settled()
      // The search index is saved and let go first (its thread too, when large and no other store
      // uses it): the final snapshot holds the database twice (the live file and its export), and
      // the index's memory need not be alive beside them.
      await this.#search.close(this.#footprint.isLarge())
      await this.#snapshots.inTurn()
    } catch (error) {
      failure = error
    }
    await this.#search.close()
    await this.#writes.close()
    const large = this.#footprint.isLarge()
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

  /** Should the search thread fall this far behind, let it catch up before taking more. */
  async #searchCaughtUp(): Promise<void> {
    if (this.#search.backlog > MAX_BACKLOG) await this.#search.indexed()
  }

  /** What follows a committed insert; none of it is needed for the events to be stored. */
  #afterInsert(rows: Param[][]): void {
    this.#search.add(rows.map(searchSource))
    try {
      this.#footprint.measure()
      this.#footprint.collectAfterGrowth()
    } catch {
      // Only the capacity's measure and a memory optimisation: the next insert measures again.
    }
  }
}
