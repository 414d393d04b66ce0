/**
 * The store interface the services see (issue 2, item 3). Small and asynchronous, so that a
 * PostgreSQL store can stand beside the sql.js one without touching the services.
 */
import type {TileRow} from '../core/merkle/index.js'
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
} from '../core/types.js'
import type {SequenceRequest, SequenceResult} from '../core/event/index.js'
import type {ErasureIntent} from '../core/erasure/index.js'
import type {PayloadMemberName} from '../core/types.js'
import type {TsaMaterial} from '../core/timestamp/index.js'
import type {SearchQuery} from '../core/search/index.js'
import type {HashedBatch, SignatureKeys} from './hashed-scan.js'
import type {IdentityConflict, LogIdentityMaterial} from './identity.js'

export interface ScanOptions {
  filter?: EventFilter
  /** First global index to return (inclusive). */
  fromIndex?: number
  /** Stop before this global index (exclusive). */
  toIndex?: number
  /**
   * Events read per query, at most (default: the store's own, thousands). What a scan holds at
   * once: a WebSocket replay to a reader that may stall keeps it small.
   */
  batchSize?: number
  /** For scanHashedEvents: the JWKs, by kid, that events' signatures are checked with (docs/signatures.md). */
  signatureKeys?: SignatureKeys
}

/** An erasure ready to be made (docs/erasure.md): its intent, and how its event is recorded. */
export interface ErasurePlan {
  intent: ErasureIntent
  /** Records the erasure event (whose id is intent.id); called once the intent is durable. */
  record(): Promise<StoredEvent>
}

/** What an erasure took: its event, the events it erased from and the members erased in all. */
export interface ErasureTaken {
  erasure: StoredEvent
  events: number
  members: number
}

/**
 * The events a selection erasure covers: those `filter` selects among the first `before_index` (and
 * recorded before `recorded_before`, when given).
 */
export interface ErasureSelection {
  filter: EventFilter
  before_index: number
  recorded_before?: string
}

/** An event a selection erasure matched: erasable ('erase', holding `members` of the requested ones) or why not. */
export interface ErasureCandidate {
  id: string
  index: number
  status: 'erase' | 'hash_version_1' | 'already_erased' | 'service_event'
  members: number
}

/**
 * Where a forwarding destination stands on one trail (docs/forwarding.md): every event below
 * `position` was sent to it (or left out by its filter).
 */
export interface ForwardingPosition {
  /** The destination's id: derived from its URL and filter, the same for every process and restart. */
  destination: string
  trail: string
  /** The destination's URL without credentials. */
  url: string
  position: number
  /** When the position last moved or the last error was recorded (ISO 8601, UTC). */
  updated_at: string
  last_error?: string
  last_error_at?: string
}

/** The forwarding positions a store keeps beside its events, and which process sends to each destination. */
export interface ForwardingPositions {
  list(): Promise<ForwardingPosition[]>
  /** Durably saves a position; false (and nothing saved) when `holder` no longer holds its destination. */
  save(position: ForwardingPosition, holder: string): Promise<boolean>
  /**
   * Takes or renews `destination` for `holder` for `leaseMs`: true when `holder` holds it now. On a
   * store with one writer process it always does.
   */
  claim(destination: string, holder: string, leaseMs: number): Promise<boolean>
  /** Lets another process take `destination` at once. */
  release(destination: string, holder: string): Promise<void>
}

export interface EventStore {
  /** Number of stored events (= the next global index). */
  count(): Promise<number>

  /**
   * Records validated events (one group commit of several requests): under the store's own write
   * lock it reads the heads and the ids to check, sequences them with sequenceEvents
   * (core/event/sequence.ts), and durably writes the new events, all or nothing, before resolving.
   * The store sequences, not its caller, so that several writers (processes) share one log. Rejects
   * with AuditError('storage_unavailable') when nothing could be written, and with 'trail_sealed'
   * once the trail is sealed (checked under that lock); then nothing was recorded.
   */
  recordEvents(requests: SequenceRequest[]): Promise<SequenceResult>

  /**
   * Seals the trail (docs/trails.md, Sealing) under the write lock, after every append that holds
   * it; resolves to false when it was sealed already (then nothing changes). appendEvents (a copy)
   * is not refused.
   */
  seal(): Promise<boolean>
  /** Whether the trail is sealed (another process may have sealed it). */
  sealed(): Promise<boolean>

  /**
   * Durably appends events sequenced elsewhere (a copy of another store), in order, all or
   * nothing; the first must carry the next index. Rejects as recordEvents does.
   */
  appendEvents(events: StoredEvent[]): Promise<void>

  getEvent(id: string): Promise<StoredEvent | undefined>
  getEvents(ids: string[]): Promise<Map<string, StoredEvent>>

  /** Events matching the filter, index ascending, with the total ignoring the page. */
  queryEvents(filter: EventFilter, page: Page): Promise<PageResult<StoredEvent>>
  /** The number of events matching the filter (queryEvents' total). */
  countEvents(filter: EventFilter): Promise<number>
  searchEvents(query: SearchQuery, page: Page): Promise<PageResult<StoredEvent>>
  /**
   * Brings the search index up to date now (searches wait for it anyway): the server calls it
   * after start-up so that the first search does not pay for it.
   */
  prepareSearch(): Promise<void>

  /** Streams events in index order, a batch at a time (never the whole table in memory). */
  scanEvents(options?: ScanOptions): AsyncIterable<StoredEvent>

  /**
   * scanEvents a batch at a time, each event with the hash recomputed from its stored content
   * (recomputeHash; what every chain check compares with the stored hash). A large scan may hash
   * on another thread while it reads on.
   */
  scanHashedEvents(options?: ScanOptions): AsyncIterable<HashedBatch>

  /**
   * scanEvents without the payload and hashes (what a policy reads), a batch at a time: several
   * times cheaper per event.
   */
  scanEventHeaders(options?: ScanOptions): AsyncIterable<EventHeader[]>

  /** The `hash` column of every event in index order (to rebuild the Merkle tree on start). */
  eventHashes(fromIndex?: number, toIndex?: number): Promise<string[]>

  /**
   * The same hashes in chunks: each gives how many events it covers and their `hash` values
   * joined into one string, so that a million hashes are a few dozen strings to decode. The string
   * is empty when one of them is not 64 characters long (then read them with eventHashes).
   */
  eventHashChunks(): AsyncIterable<{count: number; hex: string}>

  /**
   * For a store that keeps the Merkle tree with the events (PostgreSQL): the C2SP hash tiles
   * asked for, each as stored now (a partial tile at its latest width), each in one statement's
   * snapshot; a tile not stored yet is left out. A store without it has the tree rebuilt in memory.
   */
  readTreeTiles?(tiles: readonly {level: number; index: number}[]): Promise<TileRow[]>

  agentHeads(): Promise<AgentHead[]>
  /**
   * The recorded heads and the number of events (the next global index) read at one instant, with
   * no append in between: the events below `size` end exactly at `heads` unless the stored data was
   * changed outside the service (what chain verification compares, core/chain/verify.ts).
   */
  chainHeads(): Promise<{heads: AgentHead[]; size: number}>
  agentSummaries(): Promise<AgentSummary[]>
  /** `recentSince`: ISO time; events with `recorded_at` >= it count as recent. */
  stats(recentSince: string): Promise<StoreStats>
  /** How full a store with an enforced capacity is (the embedded one); absent otherwise. */
  storage?(): StorageUsage

  appendTimestamp(record: TimestampRecord): Promise<void>
  listTimestamps(): Promise<TimestampRecord[]>

  /**
   * The events of a selection that hold or held one of `members` (docs/erasure.md), index ascending;
   * with `erasableOnly`, only those an erasure would take members from.
   */
  erasureCandidates(
    selection: ErasureSelection,
    members: readonly PayloadMemberName[],
    erasableOnly?: boolean,
  ): Promise<ErasureCandidate[]>
  /**
   * One erasure at a time for the whole log (across processes sharing it): runs `plan`, and when it
   * gives an erasure, makes its intent durable, has its event recorded, then erases set by set, each
   * batch of events in one transaction, and resolves once no copy of an erased value is left in the
   * store's files (docs/erasure.md). An erasure cut short by a crash is completed when the store opens.
   */
  erase(plan: () => Promise<ErasurePlan | undefined>): Promise<ErasureTaken | undefined>

  /**
   * For a store other processes append to: calls `grown` whenever they did (with the new size when
   * known, without it after a lost connection, when anything may have happened), and `timestamped`
   * with each timestamp another process issued, and `erased` when another process erased members
   * (or may have: after a lost connection); resolves with a function that stops watching. A
   * store with one writer has no watch.
   */
  watch?(
    grown: (size?: number) => void,
    timestamped?: (record: TimestampRecord) => void,
    erased?: () => void,
  ): Promise<() => Promise<void>>

  /**
   * For a store several processes share: whether this process takes the periodic turn `name` now,
   * true for at most one process in any `periodMs` (`--timestamp-every`: one timestamp per period,
   * not one per process). A store with one writer has none: every turn is its own.
   */
  claimTurn?(name: string, periodMs: number): Promise<boolean>

  /**
   * True for a store on a database server (PostgreSQL): there, `serve` reads event headers for
   * policy checks when a check first needs them instead of holding every event's header from
   * start-up, so that a process's memory does not grow with the log (docs/scaling.md).
   */
  readonly onServer?: boolean

  /**
   * For a store several processes share: the embedded TSA's certificates and key, kept with the
   * events so that every process signs as one authority. `saveTsaMaterial` keeps the first
   * material saved and returns what is kept.
   */
  readTsaMaterial?(): Promise<TsaMaterial | undefined>
  saveTsaMaterial?(material: TsaMaterial): Promise<TsaMaterial>
  /**
   * With the TSA material: the CA certificates of the external TSAs that issued tokens for the log
   * (services/tsa/anchors.ts), kept with the events too; `addTsaAnchors` adds those not kept yet.
   */
  readTsaAnchors?(): Promise<string[]>
  addTsaAnchors?(pems: string[]): Promise<void>
  /**
   * `migrate`: takes on the identity of the log copied in (identity.ts), all of it, where the store
   * has none of its parts yet; writes nothing and resolves with the parts it holds that differ.
   */
  adoptIdentity?(identity: LogIdentityMaterial): Promise<IdentityConflict>

  /**
   * Durably records a checkpoint the log signed (its `cosignatures` are stored as given, usually
   * none). Checkpoints are kept in the order they were appended.
   */
  appendCheckpoint(record: CheckpointRecord): Promise<void>
  /**
   * Durably adds witness cosignature lines to the latest stored checkpoint of `treeSize` leaves;
   * lines it already holds are not added twice. Rejects with `not_found` when there is none.
   */
  appendCosignatures(treeSize: number, lines: string[]): Promise<void>
  /** Every stored checkpoint, oldest first. */
  listCheckpoints(): Promise<CheckpointRecord[]>
  latestCheckpoint(): Promise<CheckpointRecord | undefined>
  /**
   * The log's Ed25519 signing key as PKCS#8 PEM, created with `create` on first call and the
   * same ever after (even when two processes race to create it).
   */
  logKey(create: () => string): Promise<string>

  /** The forwarding positions (`serve --forward`, docs/forwarding.md). */
  readonly forwarding: ForwardingPositions

  /** Writes a snapshot now (also done in the background and on close). */
  snapshot(): Promise<void>
  /** Snapshots, releases the lock, closes files. */
  close(): Promise<void>
}
