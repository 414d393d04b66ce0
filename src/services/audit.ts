/**
 * The composition root: opens the store, rebuilds the in-memory Merkle tree from it (the embedded
 * store; a database store keeps the tree's tiles itself) and wires the services that the HTTP
 * server and the CLI share.
 */
import {AuditError} from '../core/errors.js'
import {DEFAULT_TRAIL} from '../core/trail/name.js'
import {leafDataFromHex, leafDataFromHexChunks, type MerkleTree} from '../core/merkle/index.js'
import {buildTree} from '../threads/merkle-build.js'
import type {PolicyDocument} from '../core/policy/index.js'
import type {TsaMaterial} from '../core/timestamp/index.js'
import {openPostgresStore, StoreError, openSqlJsStore, type SqlJsStoreOptions} from '../store/index.js'
import type {CheckpointRecord} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import {AgentKeysService} from './agent-keys.js'
import {ApprovalsService} from './approvals.js'
import {ErasureService} from './erasure.js'
import {ExportService} from './export.js'
import {Feed} from './feed.js'
import {IngestService} from './ingest.js'
import {IntegrityService} from './integrity.js'
import {PolicyService} from './policy.js'
import {QueryService} from './event-queries.js'
import {SignedHistory} from './signed-history.js'
import {TimestampService} from './timestamps.js'
import {LogFollower} from './log-follower.js'
import {catchUpTree} from './tree-sync.js'
import {treeViewOf, type TreeView} from './tree-view.js'
import {CheckpointService} from './checkpoints.js'
import {ReceiptService} from './receipts.js'
import {WitnessClient, type WitnessTarget} from './witness-client.js'
import {
  directoryAnchors,
  externalTsa,
  openEmbeddedTsa,
  storeAnchors,
  withKnownAnchors,
  type TimestampAuthority,
} from './tsa/index.js'

export interface AuditOptions {
  dataDir: string
  /**
   * A PostgreSQL database (postgres://...) to keep the log in instead of the data directory: its
   * events and its identity (embedded TSA, external TSAs' anchors, log key); `dataDir` is not read.
   */
  databaseUrl?: string
  /** Options of the sql.js store (snapshot triggers, an injected file layer for fault tests). */
  store?: Omit<SqlJsStoreOptions, 'dataDir'>
  /** An external RFC 3161 TSA; without it the log's embedded TSA signs (`<dataDir>/tsa/` or the database's). */
  tsa?: {url: string; caPem: string[]; timeoutMs?: number}
  /** Told of failures after an answered request (a listener that threw): the server logs them. */
  onError?: (error: unknown) => void
  /** The policy POST /v1/policy/check uses when the request names none (`serve --policy`). */
  defaultPolicy?: PolicyDocument
  /**
   * The trail these services are of (docs/trails.md), named in refusals; with `schema`, on
   * PostgreSQL, its tables are in that schema of `databaseUrl`. Default: trail `default`.
   */
  trail?: {name: string; schema?: string}
  /** The TSA to timestamp with, the service's (every trail shares it); default: made from `tsa` and the store. */
  timestampAuthority?: TimestampAuthority
  /** The log's checkpoint origin (`serve --origin`); default: one derived from the log key. */
  origin?: string
  /** Witnesses each new checkpoint is submitted to (`serve --witness URL --witness-key VKEY`). */
  witnesses?: WitnessTarget[]
  /** Where the witness clients say what went wrong (default: stderr). */
  logLine?: (line: string) => void
}

export interface AuditServices {
  /** The trail's name (docs/trails.md). */
  readonly trail: string
  readonly dataDir: string
  readonly store: EventStore
  /** The log's Merkle tree: in memory, or the store's hash tiles. */
  readonly tree: TreeView
  readonly feed: Feed
  readonly ingest: IngestService
  readonly query: QueryService
  readonly integrity: IntegrityService
  readonly timestamps: TimestampService
  /** Whether stored history still extends what the log signed (timestamps, checkpoints). */
  readonly history: SignedHistory
  readonly exporter: ExportService
  readonly policy: PolicyService
  /** Agents' public keys and their lifetime in the log (docs/signatures.md). */
  readonly keys: AgentKeysService
  /** Erasure of payload members (docs/erasure.md). */
  readonly erasure: ErasureService
  /** Held calls and their decisions (docs/oversight.md). */
  readonly approvals: ApprovalsService
  /** The size up to which every event was published on `feed` (where a live stream starts). */
  publishedSize(): number
  /**
   * Resolves once every event this process recorded before the call is published, so that a
   * stream attaching after an answered append starts past it.
   */
  published(): Promise<void>
  /**
   * Brings what this process holds in memory (the embedded store's Merkle tree) up to the store;
   * with a database store, only checks that it answers.
   */
  refresh(): Promise<void>
  readonly checkpoints: CheckpointService
  /** COSE Receipts (RFC 9942) signed with the log key. */
  readonly receipts: ReceiptService
  readonly witnesses: readonly WitnessClient[]
  /** The TSA of `timestamps` (the service's). */
  readonly authority: TimestampAuthority
  close(): Promise<void>
}

/** The embedded TSA is created on first use, not by every command that opens the data directory. */
function lazyEmbeddedTsa(dataDir: string, store: EventStore): TimestampAuthority {
  let opened: Promise<TimestampAuthority> | undefined
  const {readTsaMaterial, saveTsaMaterial} = store
  const keeper =
    readTsaMaterial && saveTsaMaterial
      ? {
          where: 'the database',
          read: () => readTsaMaterial.call(store),
          create: (material: TsaMaterial) => saveTsaMaterial.call(store, material),
        }
      : undefined
  const open = () =>
    (opened ??= openEmbeddedTsa(dataDir, keeper).catch((error: unknown) => {
      opened = undefined
      throw error
    }))
  return {
    kind: 'embedded',
    timestamp: async (digest) => (await open()).timestamp(digest),
    trustAnchorsPem: async () => (await open()).trustAnchorsPem(),
  }
}

/** Rebuilds the Merkle tree from the stored `hash` column, in index order, on every core. */
async function loadTree(store: EventStore): Promise<MerkleTree> {
  // Read as joined strings; only a malformed stored hash takes the slow path, which names it.
  const leafData = await leafDataFromHexChunks(store.eventHashChunks(), await store.count())
  return buildTree(leafData ?? leafDataFromHex(await store.eventHashes()))
}

/**
 * What stops a data directory from opening, when it is neither a refusal already said (an
 * AuditError: locked, not a data directory, a database that cannot be used) nor a fault of this
 * program (TypeError, ReferenceError), comes from its files: one that is not a SQLite database, a
 * corrupt journal, one that cannot be read. Said with the directory, for `serve` and every CLI
 * command alike.
 */
function openingError(error: unknown, dataDir: string): unknown {
  if (error instanceof AuditError || error instanceof TypeError || error instanceof ReferenceError) return error
  return new StoreError('data_dir', `cannot open the data directory ${dataDir}: ${(error as Error).message}`)
}

/** The data directory's store, or the PostgreSQL one of `databaseUrl`. */
function openStore(options: AuditOptions): Promise<EventStore> {
  const opening =
    options.databaseUrl === undefined
      ? openSqlJsStore({...options.store, dataDir: options.dataDir})
      : openPostgresStore({databaseUrl: options.databaseUrl, trail: postgresTrail(options.trail)})
  return opening.catch((error: unknown) => {
    throw openingError(error, options.dataDir)
  })
}

/** A trail whose tables are in a schema of their own; undefined for `default`'s, found as before trails existed. */
function postgresTrail(trail: AuditOptions['trail']): {name: string; schema: string} | undefined {
  return trail?.schema === undefined ? undefined : {name: trail.name, schema: trail.schema}
}

/** The TSA of `options` (an external one, or the embedded one of the data directory or the database). */
export function timestampAuthorityOf(options: AuditOptions, store: EventStore): TimestampAuthority {
  // A store that keeps the log's identity (PostgreSQL) keeps its anchors too: no directory is read.
  return withKnownAnchors(
    options.tsa ? externalTsa(options.tsa) : lazyEmbeddedTsa(options.dataDir, store),
    storeAnchors(store) ?? directoryAnchors(options.dataDir),
  )
}

/** The services of the log's signed history: timestamps, checkpoints sent to the witnesses, receipts. */
function signingServices(
  options: AuditOptions,
  {store, tree, integrity, feed}: {store: EventStore; tree: TreeView; integrity: IntegrityService; feed: Feed},
) {
  const authority = options.timestampAuthority ?? timestampAuthorityOf(options, store)
  const history = new SignedHistory({integrity})
  const timestamps = new TimestampService({store, tree, integrity, history, authority, feed})
  const witnesses = (options.witnesses ?? []).map(
    (witness) => new WitnessClient({store, tree, witness, log: options.logLine}),
  )
  const onSigned = (record: CheckpointRecord) => witnesses.forEach((w) => w.submit(record))
  const checkpoints = new CheckpointService({store, tree, history, origin: options.origin, onSigned})
  const receipts = new ReceiptService({store, tree, checkpoints})
  return {history, timestamps, witnesses, checkpoints, receipts, authority}
}

export async function openAudit(options: AuditOptions): Promise<AuditServices> {
  const store = await openStore(options)
  let unwatch: (() => Promise<void>) | undefined
  try {
    // A store that keeps the tree's tiles is read as it is: nothing per event at start-up.
    const memory = store.readTreeTiles === undefined ? await loadTree(store) : undefined
    const tree = treeViewOf(store, memory)
    const feed = new Feed()
    // Key events are recorded through the ingest service made below, as every event is.
    const keys: AgentKeysService = new AgentKeysService({store, record: (body) => ingest.recordInternal(body)})
    const integrity = new IntegrityService({store, tree, keys})
    await keys.current()
    const onError = options.onError ?? (() => {})
    const follower = new LogFollower({
      store,
      tree: memory,
      published: memory?.size ?? (await store.count()),
      feed,
      onError,
    })
    const ingest = new IngestService({
      store,
      tree: memory,
      onRecorded: (events) => follower.recorded(events),
      onError,
      jwkOf: (kid) => keys.jwkOf(kid),
    })
    const query = new QueryService({store, integrity})
    unwatch = await store.watch?.(
      (size) => follower.grown(size),
      ({token: _token, ...announced}) => feed.emit('timestamp', announced),
      () => query.forgetPages(),
    )
    const erasure = new ErasureService({store, ingest, onErased: () => query.forgetPages()})
    const signing = signingServices(options, {store, tree, integrity, feed})
    const {timestamps, witnesses, checkpoints, receipts} = signing
    const exporter = new ExportService({store, tree, timestamps, checkpoints, receipts})
    const approvals = new ApprovalsService({store, record: (body) => ingest.recordInternal(body)})
    const policy = new PolicyService({store, integrity, timestamps, feed, defaultPolicy: options.defaultPolicy})
    const services = {store, tree, feed, ingest, query, integrity, ...signing, exporter, policy, keys, erasure}
    return {
      trail: options.trail?.name ?? DEFAULT_TRAIL,
      dataDir: options.dataDir,
      ...services,
      approvals,
      publishedSize: () => follower.published,
      published: () => follower.settled(),
      refresh: memory ? () => catchUpTree(memory, store) : async () => void (await store.count()),
      async close() {
        witnesses.forEach((w) => w.close())
        await unwatch?.()
        await ingest.drain()
        await store.close()
      },
    }
  } catch (error) {
    await unwatch?.()
    await store.close()
    throw openingError(error, options.dataDir)
  }
}
