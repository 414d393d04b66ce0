/**
 * The PostgreSQL store (docs/postgres.md): the EventStore of a log any number of processes share in
 * one database. Nothing is cached in memory, so no process reads stale state. Each method is one
 * part of the store, in a module of its own:
 *
 * - database.ts: the pool, connections, transactions and what their failures mean;
 * - migrations.ts: the schema's versions and upgrades; schema.ts: the `events` columns;
 * - group-commit.ts: the write path under the `log_state` row lock (sequencing, aggregates, tiles);
 * - queries.ts, scans.ts: reads of events, pages, aggregates, and long stretches of the log;
 * - tiles.ts: the Merkle tree's hash tiles; notify.ts: what other processes commit;
 * - records.ts: timestamps, checkpoints and turns; identity.ts: TSA material, anchors, log key;
 * - erasure.ts: erasures and their recovery.
 */
import type {SequenceRequest, SequenceResult} from '../../core/event/index.js'
import type {TileRow} from '../../core/merkle/index.js'
import type {TsaMaterial} from '../../core/timestamp/index.js'
import type {
  AgentHead,
  AgentSummary,
  CheckpointRecord,
  EventFilter,
  EventHeader,
  Page,
  PageResult,
  PayloadMemberName,
  StoreStats,
  StoredEvent,
  TimestampRecord,
} from '../../core/types.js'
import type {HashedBatch} from '../hashed-scan.js'
import type {IdentityConflict, LogIdentityMaterial} from '../identity.js'
import type {ErasureCandidate, ErasurePlan, ErasureSelection, ErasureTaken, EventStore, ScanOptions} from '../store.js'
import type {SearchQuery} from '../../core/search/index.js'
import {Database, describe, openPool, queryOn, type Query} from './database.js'
import {erase, erasureCandidates, recoverErasures} from './erasure.js'
import {PostgresForwarding} from './forwarding.js'
import {StoreError} from '../errors.js'
import {databaseError} from './errors.js'
import {GroupCommits} from './group-commit.js'
import {
  addTsaAnchors,
  adoptIdentity,
  logKey,
  readLogKey,
  readTsaAnchors,
  readTsaMaterial,
  saveTsaMaterial,
} from './identity.js'
import {migrate} from './migrations.js'
import {watch} from './notify.js'
import * as queries from './queries.js'
import * as records from './records.js'
import * as scans from './scans.js'
import {readTreeTiles} from './tiles.js'
import {isSealed, seal} from './seal.js'
import {DEFAULT_SCOPE, trailScope, urlSearching, type TrailScope} from './trail-scope.js'

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  databaseUrl: string
  /** Connections of this process (10). */
  maxConnections?: number
  /**
   * Told after each group commit of recordEvents how long its write took (the log's lock is held
   * within it: group-commit.ts) and how many events it recorded: for benchmarks.
   */
  onGroupCommit?: (lockHeldMs: number, events: number) => void
  /**
   * The trail whose tables these are, in the schema of that name (docs/trails.md, Storage); without
   * it, trail `default`: the tables the connection's search_path finds, as before trails existed.
   */
  trail?: {name: string; schema: string}
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const scope = options.trail === undefined ? DEFAULT_SCOPE : trailScope(options.trail.name, options.trail.schema)
  const url = scope.schema === undefined ? options.databaseUrl : urlSearching(options.databaseUrl, scope.schema)
  const pool = openPool(url, options.maxConnections)
  try {
    await migrate(pool, scope)
    const client = await pool.connect()
    try {
      await recoverErasures(client, scope)
    } finally {
      client.release()
    }
  } catch (error) {
    await pool.end().catch(() => undefined)
    if (error instanceof StoreError) throw error
    throw databaseError(`cannot use the database ${describe(options.databaseUrl)}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  return new PostgresStore(new Database(pool), url, scope, options.onGroupCommit)
}

export class PostgresStore implements EventStore {
  readonly onServer = true
  /** Positions of the timestamps this process issued: its own feed has announced them already. */
  readonly #issued = new Set<number>()
  /** This process's erasures one after the other; other processes' wait on the advisory lock (erasure.ts). */
  #erasures: Promise<unknown> = Promise.resolve()
  readonly #query: Query
  readonly #commits: GroupCommits
  readonly forwarding: PostgresForwarding

  /** Use openPostgresStore. */
  constructor(
    private readonly db: Database,
    private readonly databaseUrl: string,
    private readonly scope: TrailScope,
    onGroupCommit?: (lockHeldMs: number, events: number) => void,
  ) {
    this.#query = db.query
    this.#commits = new GroupCommits(db, scope, onGroupCommit)
    this.forwarding = new PostgresForwarding(db.query)
  }

  // Writes (group-commit.ts)

  recordEvents(requests: SequenceRequest[]): Promise<SequenceResult> {
    return this.#commits.record(requests)
  }

  appendEvents(events: StoredEvent[]): Promise<void> {
    return this.#commits.append(events)
  }

  // Reads (queries.ts)

  count(): Promise<number> {
    return queries.count(this.#query)
  }

  getEvent(id: string): Promise<StoredEvent | undefined> {
    return queries.getEvent(this.#query, id)
  }

  getEvents(ids: string[]): Promise<Map<string, StoredEvent>> {
    return queries.getEvents(this.#query, ids)
  }

  queryEvents(filter: EventFilter, page: Page): Promise<PageResult<StoredEvent>> {
    return queries.queryEvents(this.#query, filter, page)
  }

  countEvents(filter: EventFilter): Promise<number> {
    return queries.countEvents(this.#query, filter)
  }

  searchEvents(query: SearchQuery, page: Page, within?: Pick<EventFilter, 'agents'>): Promise<PageResult<StoredEvent>> {
    return queries.searchEvents(this.#query, query, page, within)
  }

  /** The text index is kept with every insert: nothing to prepare. */
  async prepareSearch(): Promise<void> {}

  async agentHeads(): Promise<AgentHead[]> {
    return (await this.chainHeads()).heads
  }

  chainHeads(): Promise<{heads: AgentHead[]; size: number}> {
    return queries.chainHeads(this.#query)
  }

  agentSummaries(): Promise<AgentSummary[]> {
    return queries.agentSummaries(this.#query)
  }

  stats(recentSince: string): Promise<StoreStats> {
    return queries.stats(this.#query, recentSince)
  }

  // Scans (scans.ts) and the tree (tiles.ts)

  scanEvents(options: ScanOptions = {}): AsyncIterable<StoredEvent> {
    return scans.scanEvents(this.#query, options)
  }

  scanHashedEvents(options: ScanOptions = {}): AsyncIterable<HashedBatch> {
    return scans.scanHashedEvents(this.#query, this.databaseUrl, options)
  }

  scanEventHeaders(options: ScanOptions = {}): AsyncIterable<EventHeader[]> {
    return scans.scanEventHeaders(this.#query, options)
  }

  eventHashes(fromIndex = 0, toIndex?: number): Promise<string[]> {
    return scans.eventHashes(this.#query, fromIndex, toIndex)
  }

  eventHashChunks(): AsyncIterable<{count: number; hex: string}> {
    return scans.eventHashChunks(this.#query)
  }

  readTreeTiles(tiles: readonly {level: number; index: number}[]): Promise<TileRow[]> {
    return readTreeTiles(this.#query, tiles)
  }

  // Other processes (notify.ts, records.ts)

  watch(
    grown: (size?: number) => void,
    timestamped?: (record: TimestampRecord) => void,
    erased?: () => void,
  ): Promise<() => Promise<void>> {
    return watch(this.#query, this.databaseUrl, this.scope, this.#issued, grown, timestamped, erased)
  }

  claimTurn(name: string, periodMs: number): Promise<boolean> {
    return records.claimTurn(this.#query, name, periodMs)
  }

  // Timestamps and checkpoints (records.ts)

  async appendTimestamp(record: TimestampRecord): Promise<void> {
    await this.db.transaction(async (client) => {
      this.#issued.add(await records.appendTimestamp(client, record, this.scope.channels.timestamps))
    })
  }

  listTimestamps(): Promise<TimestampRecord[]> {
    return records.listTimestamps(this.#query)
  }

  appendCheckpoint(record: CheckpointRecord): Promise<void> {
    return records.appendCheckpoint(this.#query, record)
  }

  appendCosignatures(treeSize: number, lines: string[]): Promise<void> {
    return this.db.transaction((client) => records.appendCosignatures(client, treeSize, lines))
  }

  listCheckpoints(): Promise<CheckpointRecord[]> {
    return records.listCheckpoints(this.#query)
  }

  latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    return records.latestCheckpoint(this.#query)
  }

  // The log's identity (identity.ts)

  readTsaMaterial(): Promise<TsaMaterial | undefined> {
    return readTsaMaterial(this.#query)
  }

  saveTsaMaterial(material: TsaMaterial): Promise<TsaMaterial> {
    return saveTsaMaterial(this.#query, material)
  }

  readTsaAnchors(): Promise<string[]> {
    return readTsaAnchors(this.#query)
  }

  addTsaAnchors(pems: string[]): Promise<void> {
    return addTsaAnchors(this.#query, pems)
  }

  adoptIdentity(identity: LogIdentityMaterial): Promise<IdentityConflict> {
    return this.db.transaction((client) => adoptIdentity(queryOn(client), identity))
  }

  logKey(create: () => string): Promise<string> {
    return logKey(this.#query, create)
  }

  /** The log key when the trail has one, none made: what `migrate` compares before it writes. */
  storedLogKey(): Promise<string | undefined> {
    return readLogKey(this.#query)
  }

  // Sealing (seal.ts)

  /** `at`: when it was sealed, for `migrate` to keep a data directory's seal time; default now. */
  seal(at?: string): Promise<boolean> {
    return seal(this.db, this.scope, at)
  }

  sealed(): Promise<boolean> {
    return isSealed(this.#query)
  }

  // Erasure (erasure.ts)

  erasureCandidates(
    selection: ErasureSelection,
    members: readonly PayloadMemberName[],
    erasableOnly?: boolean,
  ): Promise<ErasureCandidate[]> {
    return this.db.withClient((client) => erasureCandidates(client, selection, members, erasableOnly))
  }

  erase(plan: () => Promise<ErasurePlan | undefined>): Promise<ErasureTaken | undefined> {
    const run = this.#erasures.then(() => this.db.withClient((client) => erase(client, this.scope, plan)))
    this.#erasures = run.catch(() => undefined)
    return run
  }

  /** Every commit is durable in the database: there is no snapshot to write. */
  async snapshot(): Promise<void> {}

  close(): Promise<void> {
    return this.db.close()
  }
}
