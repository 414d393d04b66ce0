/**
 * The PostgreSQL store (docs/postgres.md): the only module that talks to `pg`. Any number of
 * processes share one database. Every write is one transaction that first locks the one-row
 * `log_state` FOR UPDATE, then reads the heads and ids it must check, sequences
 * (core/event/sequence.ts), inserts the events with one multi-row statement, updates heads,
 * counts and size, extends the Merkle tree's hash tiles, and commits: the row lock orders writers, so
 * commit order is index order and indexes run 0..n-1 without gaps. Nothing is cached in memory, so
 * no process reads stale state.
 */
import pg from 'pg'
import {AuditError} from '../../core/errors.js'
import {appendedTiles, edgeTiles, hashLeaf, tileKey, type TileRow} from '../../core/merkle/index.js'
import {
  requestedAgents,
  requestedIds,
  sequenceEvents,
  type SequenceRequest,
  type SequenceResult,
} from '../../core/event/index.js'
import type {TsaMaterial} from '../../core/timestamp/index.js'
import type {
  AgentHead,
  AgentSummary,
  EventFilter,
  EventHeader,
  Page,
  PageResult,
  StoreStats,
  StoredEvent,
  TimestampRecord,
  CheckpointRecord,
} from '../../core/types.js'
import {aggregateRows} from '../aggregates.js'
import {aggregateCounted, isEmptyFilter} from '../filters.js'
import {countedPageSql, type CountedPageRow} from './counted-page.js'
import {rangeHashedBatches} from './range-scan.js'
import {DatabaseError} from './errors.js'
import {hashedBatches, THREAD_FROM_EVENTS, type HashedBatch} from '../hashed-scan.js'
import {headerOf, toEvent, toHeader} from '../event-row.js'
import type {EventStore, ScanOptions, SearchQuery} from '../store.js'
import {
  EVENT_COLUMNS,
  EVENT_JSON,
  eventColumns,
  HEADER_JSON,
  INSERT_EVENTS,
  MIGRATIONS,
  SCHEMA_VERSION,
  SEARCH_PAIRS_VERSION,
  inVerbatimOrder,
  VERBATIM_ORDER_VERSION,
  searchColumn,
  TILES_VERSION,
} from './schema.js'
import {searchDocument, searchQuery} from './search-text.js'
import {addTsaAnchors, adoptIdentity, readTsaAnchors, type Query} from './identity.js'
import type {IdentityConflict, LogIdentityMaterial} from '../identity.js'
import {KeyState} from '../key-state.js'
import {KEYS_AGENT} from '../../core/signature/index.js'
import {
  addPending,
  applyErasure,
  completePending,
  ERASURE_CHANNEL,
  erasureCandidates,
  recoverErasures,
  removePending,
  withErasureLock,
} from './erasure.js'
import type {ErasureCandidate, ErasurePlan, ErasureSelection, ErasureTaken} from '../store.js'
import type {PayloadMemberName} from '../../core/types.js'

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  databaseUrl: string
  /** Connections of this process (10). */
  maxConnections?: number
  /**
   * Told after each group commit of recordEvents how long it held the log's lock (from the
   * `log_state` row lock to the end of COMMIT) and how many events it recorded: for benchmarks.
   */
  onGroupCommit?: (lockHeldMs: number, events: number) => void
}

const SCAN_BATCH = 5000
/**
 * Scans hash on two threads and leave this one to take rows off the socket: the server builds the
 * next batch meanwhile instead of waiting for it to be read.
 */
const POSTGRES_HASHING = {threads: 2, callerHashes: false}
/** The channel every commit of events notifies, with the new size (LISTEN/NOTIFY). */
const CHANNEL = 'audit_trail_events'
/** The channel every issued timestamp notifies, with its position in `timestamps`. */
const TIMESTAMP_CHANNEL = 'audit_trail_timestamps'
/** After a lost LISTEN connection, try again this often. */
const RELISTEN_MS = 1000
const HASH_CHUNK = 65_536
/** Serialises schema changes of processes starting at once (pg_advisory_xact_lock key). */
const MIGRATION_LOCK = 0x61747261

/** The URL without its password, for messages. */
function describe(url: string): string {
  try {
    const parsed = new URL(url)
    parsed.password = ''
    return parsed.toString()
  } catch {
    return 'the database URL'
  }
}

/** Whether a pg failure is the connection's (server down, restarted, unreachable): 503, not 500. */
function isConnectionError(error: unknown): boolean {
  const code = (error as {code?: unknown}).code
  if (typeof code === 'string' && (/^(08|57P|53)/.test(code) || /^E[A-Z]+$/.test(code))) return true
  return /Connection terminated|connection is closed|Client has encountered a connection error|timeout/i.test(
    (error as Error).message ?? '',
  )
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  let config: pg.PoolConfig
  try {
    config = {connectionString: options.databaseUrl, max: options.maxConnections ?? 10, connectionTimeoutMillis: 10_000}
    if (!/^postgres(ql)?:\/\//.test(options.databaseUrl)) throw new Error('not a postgres:// URL')
  } catch (error) {
    throw new DatabaseError(
      `${describe(options.databaseUrl)} is not a PostgreSQL URL (postgres://user:password@host:port/database)`,
      {cause: error},
    )
  }
  const pool = new pg.Pool(config)
  // An idle connection that breaks (the server restarted) is replaced at the next checkout.
  pool.on('error', () => undefined)
  try {
    await migrate(pool)
    const client = await pool.connect()
    try {
      await recoverErasures(client)
    } finally {
      client.release()
    }
  } catch (error) {
    await pool.end().catch(() => undefined)
    if (error instanceof DatabaseError) throw error
    throw new DatabaseError(`cannot use the database ${describe(options.databaseUrl)}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  return new PostgresStore(pool, options.databaseUrl, options.onGroupCommit)
}

/** Creates or updates the schema, once, whichever process starts first. */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)')
    const {rows} = await client.query<{version: number}>('SELECT version FROM schema_version')
    const current = rows[0]?.version ?? 0
    if (current > SCHEMA_VERSION) {
      throw new DatabaseError(
        `the database holds schema version ${current}, newer than this program's ${SCHEMA_VERSION}: upgrade ` +
          `audit-trail`,
      )
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) await client.query(MIGRATIONS[version - 1]!)
    if (current > 0 && current < TILES_VERSION) await buildTiles(client)
    if (current > 0 && current < VERBATIM_ORDER_VERSION) await reorderVerbatim(client)
    if (current > 0 && current < SEARCH_PAIRS_VERSION) await rebuildSearch(client)
    if (rows.length === 0) await client.query('INSERT INTO schema_version (version) VALUES ($1)', [SCHEMA_VERSION])
    else await client.query('UPDATE schema_version SET version = $1', [SCHEMA_VERSION])
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

/**
 * The hash tiles of the events stored before the tiles were kept (an upgrade), built once, in
 * batches of whole tiles, inside the migration's transaction.
 */
async function buildTiles(client: pg.PoolClient): Promise<void> {
  const {
    rows: [state],
  } = await client.query<{size: string}>('SELECT size FROM log_state')
  const size = Number(state!.size)
  const edge = new Map<string, Buffer>()
  for (let from = 0; from < size; from += HASH_CHUNK) {
    const {rows} = await client.query<{hash: string}>(
      'SELECT hash FROM events WHERE "index" >= $1 AND "index" < $2 ORDER BY "index"',
      [from, Math.min(size, from + HASH_CHUNK)],
    )
    const tiles = tilesAppending(
      from,
      edge,
      rows.map((row) => row.hash),
    )
    await writeTiles(client, tiles)
    for (const tile of tiles) edge.set(tileKey(tile.level, tile.index), tile.hashes)
  }
}

/** The `verbatim` arrays of an older schema rewritten in EVENT_ROW's order, inside the migration. */
async function reorderVerbatim(client: pg.PoolClient): Promise<void> {
  const {rows} = await client.query<{index: string; verbatim: string}>(
    'SELECT "index", verbatim FROM events WHERE verbatim IS NOT NULL',
  )
  if (rows.length === 0) return
  await client.query(
    `UPDATE events SET verbatim = u.verbatim FROM unnest($1::bigint[], $2::text[]) AS u("index", verbatim)
     WHERE events."index" = u."index"`,
    [rows.map((r) => r.index), rows.map((r) => inVerbatimOrder(r.verbatim))],
  )
}

/** Every row's `search` made again by this version's searchDocument, in batches, inside the migration. */
async function rebuildSearch(client: pg.PoolClient): Promise<void> {
  let after: string | undefined
  for (;;) {
    const {rows} = await client.query<{row: string; index: string}>(
      `SELECT ${EVENT_JSON} AS row, "index" FROM events ${after === undefined ? '' : 'WHERE "index" > $1'}
       ORDER BY "index" LIMIT ${SCAN_BATCH}`,
      after === undefined ? [] : [after],
    )
    if (rows.length === 0) return
    await client.query(
      `UPDATE events SET search = u.search::tsvector FROM unnest($1::bigint[], $2::text[]) AS u("index", search)
       WHERE events."index" = u."index"`,
      [rows.map((r) => r.index), rows.map((r) => searchDocument(toEvent(r.row)))],
    )
    after = rows[rows.length - 1]!.index
  }
}

/** The tiles that change when the events of `hashes` follow the first `size` (appendedTiles). */
function tilesAppending(size: number, edge: ReadonlyMap<string, Buffer>, hashes: readonly string[]): TileRow[] {
  return appendedTiles(size, edge, leafHashesOf(hashes, size))
}

/** The leaf hashes of event hashes (RFC 9162 2.1.1: SHA-256(0x00 || d)), back to back. */
function leafHashesOf(hashes: readonly string[], firstIndex: number): Buffer {
  const out = Buffer.alloc(hashes.length * 32)
  hashes.forEach((hash, i) => {
    if (!/^[0-9a-f]{64}$/i.test(hash)) {
      throw new DatabaseError(`the event at index ${firstIndex + i} has a malformed hash: ${hash}`)
    }
    out.set(hashLeaf(Buffer.from(hash, 'hex')), i * 32)
  })
  return out
}

async function writeTiles(client: pg.PoolClient, tiles: readonly TileRow[]): Promise<void> {
  if (tiles.length === 0) return
  await client.query(
    `INSERT INTO merkle_tiles (level, idx, hashes)
    SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bytea[])
    ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes`,
    [tiles.map((t) => t.level), tiles.map((t) => t.index), tiles.map((t) => t.hashes)],
  )
}

/**
 * Begins a group commit: the log's one row, locked until COMMIT, so that indexes are given in commit
 * order without a gap (never a SEQUENCE: a rollback would leave one).
 */
const LOCK_LOG = 'BEGIN; SELECT size FROM log_state FOR UPDATE'

const EDGE_TILES = `SELECT json_agg(json_build_array(level, idx, encode(hashes, 'hex'))) FROM merkle_tiles
  WHERE (level, idx) IN (SELECT * FROM unnest($LEVELS::smallint[], $INDEXES::bigint[]))`

/** The right edge of the tree, as [level, index, hex] rows (null when there is none). */
const READ_EDGE = `SELECT (${EDGE_TILES.replace('$LEVELS', '$1').replace('$INDEXES', '$2')}) AS edge`

/**
 * The rows of the events with the ids of the text[] parameter `$n`, one index lookup per id: a
 * filter `id = ANY(...)` is planned as a scan of the whole table whenever the planner takes `events`
 * for smaller than it is (no statistics yet on a young table), and the lookup of each id is never
 * (docs/postgres.md, Plans).
 */
const EVENT_ROWS_BY_ID = (n: number) => `SELECT found.row FROM unnest($${n}::text[]) AS wanted(wanted_id),
  LATERAL (SELECT ${EVENT_JSON} AS row FROM events WHERE id = wanted.wanted_id LIMIT 1) AS found`

/** Under the lock: the agents' heads, the events already stored under requested ids, the tree's edge. */
const READ_FOR_APPEND = `SELECT
  (SELECT json_agg(json_build_array(agent_id, last_sequence::text, head_hash)) FROM agents
    WHERE agent_id = ANY($1::text[])) AS heads,
  (SELECT array_agg(row) FROM (${EVENT_ROWS_BY_ID(2)}) AS existing) AS existing,
  (${EDGE_TILES.replace('$LEVELS', '$3').replace('$INDEXES', '$4')}) AS edge`

/** The events' columns, then the agents' and counts' rows, the tiles, the size and the notification. */
const APPEND = (() => {
  let n = EVENT_COLUMNS.length
  const next = (count: number) => Array.from({length: count}, () => `$${++n}`)
  const [agents, counts, tiles, [size, channel, payload]] = [next(7), next(3), next(3), next(3)]
  return `WITH inserted AS (${INSERT_EVENTS}),
  agent_rows AS (INSERT INTO agents (agent_id, event_count, first_activity, last_activity,
      last_sequence, head_hash, last_recorded_at)
    SELECT * FROM unnest(${agents[0]}::text[], ${agents[1]}::bigint[], ${agents[2]}::text[], ${agents[3]}::text[],
      ${agents[4]}::bigint[], ${agents[5]}::text[], ${agents[6]}::text[])
    ON CONFLICT (agent_id) DO UPDATE SET
      event_count = agents.event_count + excluded.event_count,
      first_activity = least(agents.first_activity, excluded.first_activity),
      last_activity = greatest(agents.last_activity, excluded.last_activity),
      head_hash = CASE WHEN excluded.last_sequence >= agents.last_sequence
      THEN excluded.head_hash ELSE agents.head_hash END,
      last_sequence = greatest(agents.last_sequence, excluded.last_sequence),
      last_recorded_at = greatest(agents.last_recorded_at, excluded.last_recorded_at)),
  count_rows AS (INSERT INTO action_counts (field, value, count)
    SELECT * FROM unnest(${counts[0]}::text[], ${counts[1]}::text[], ${counts[2]}::bigint[])
    ON CONFLICT (field, value) DO UPDATE SET count = action_counts.count + excluded.count),
  tile_rows AS (INSERT INTO merkle_tiles (level, idx, hashes)
    SELECT * FROM unnest(${tiles[0]}::smallint[], ${tiles[1]}::bigint[], ${tiles[2]}::bytea[])
    ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes),
  state AS (UPDATE log_state SET size = ${size})
  SELECT pg_notify(${channel}, ${payload})`
})()

type TileJson = [number, string, string][] | null

/** The level and index columns of tiles, as the edge queries take them. */
function tileKeys(tiles: readonly {level: number; index: number}[]): [number[], number[]] {
  return [tiles.map((t) => t.level), tiles.map((t) => t.index)]
}

function tilesOf(rows: TileJson): Map<string, Buffer> {
  const edge = new Map<string, Buffer>()
  for (const [level, idx, hex] of rows ?? []) edge.set(tileKey(level, Number(idx)), Buffer.from(hex, 'hex'))
  return edge
}

type Row = Record<string, unknown>

/** A HEADER_JSON: the header's columns, or `E` and the row of an event kept in `verbatim`. */
function toHeaderOrEvent(row: string): EventHeader {
  if (!row.startsWith('E')) return toHeader(row)
  return headerOf(toEvent(row.slice(1)))
}

/** The WHERE clause of a filter and index range, with PostgreSQL placeholders from $first on. */
export function whereOf(
  filter: EventFilter = {},
  range: Omit<ScanOptions, 'filter'> = {},
  first = 1,
): {sql: string; params: unknown[]} {
  const conditions: string[] = []
  const params: unknown[] = []
  const add = (condition: string, value: unknown) => {
    params.push(value)
    conditions.push(condition.replace('?', `$${first + params.length - 1}`))
  }
  if (filter.agent_id !== undefined) add('agent_id = ?', filter.agent_id)
  if (filter.action_type !== undefined) add('action_type = ?', filter.action_type)
  if (filter.since !== undefined) add('"timestamp" >= ?', filter.since)
  if (filter.until !== undefined) add('"timestamp" < ?', filter.until)
  if (filter.labels !== undefined && Object.keys(filter.labels).length > 0)
    add('labels @> ?::jsonb', JSON.stringify(filter.labels))
  if (filter.trace_id !== undefined) add('trace_id = ?', filter.trace_id)
  if (filter.session_id !== undefined) add('session_id = ?', filter.session_id)
  if (range.fromIndex !== undefined) add('"index" >= ?', range.fromIndex)
  if (range.toIndex !== undefined) add('"index" < ?', range.toIndex)
  return {sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params}
}

export class PostgresStore implements EventStore {
  readonly onServer = true
  #closed = false
  /** The agents' keys, caught up under the log's lock before each group is sequenced. */
  readonly #keys = new KeyState()

  /** Use openPostgresStore. */
  constructor(
    private readonly pool: pg.Pool,
    private readonly databaseUrl: string,
    private readonly onGroupCommit?: (lockHeldMs: number, events: number) => void,
  ) {}

  /** A query on any pooled connection; connection failures become storage_unavailable. */
  async #query<R extends Row = Row>(sql: string, params: unknown[] = []): Promise<R[]> {
    const client = await this.#connect('')
    let broken = false
    try {
      return (await client.query<R>(sql, params)).rows
    } catch (error) {
      broken = isConnectionError(error)
      throw this.#mapped(error)
    } finally {
      this.#release(client, broken)
    }
  }

  /** A pooled connection; none to be had (the server is down or refuses) is storage_unavailable. */
  async #connect(prefix: string): Promise<pg.PoolClient> {
    if (this.#closed) throw new AuditError('storage_unavailable', 'the store is closed')
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (error) {
      throw new AuditError('storage_unavailable', `${prefix}the database is unavailable: ${(error as Error).message}`, {
        cause: error,
      })
    }
    // node-postgres reports a connection lost between queries (the server restarted) as an
    // 'error' event of the checked-out client, which would end the process unheard. The next
    // query fails with it, and the connection is discarded at release.
    const lost = () => this.#lost.add(client)
    client.on('error', lost)
    this.#listeners.set(client, lost)
    return client
  }

  readonly #lost = new WeakSet<pg.PoolClient>()
  readonly #listeners = new WeakMap<pg.PoolClient, () => void>()

  /** Back to the pool; a connection that failed or was lost is closed instead. */
  #release(client: pg.PoolClient, broken: boolean): void {
    const listener = this.#listeners.get(client)
    if (listener !== undefined) client.off('error', listener)
    client.release(broken || this.#lost.has(client))
  }

  #mapped(error: unknown): unknown {
    if (error instanceof AuditError) return error
    if (isConnectionError(error))
      return new AuditError('storage_unavailable', `the database is unavailable: ${(error as Error).message}`, {
        cause: error,
      })
    return error
  }

  /** Runs `work` in one transaction; rolled back (nothing written) when it throws. */
  async #transaction<T>(work: (client: pg.PoolClient, size: number) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    const client = await this.#connect('nothing was recorded: ')
    let broken = false
    try {
      // BEGIN and, with LOCK_LOG, the log's row lock in one round trip (one simple query).
      const began = (await client.query(begin)) as unknown as pg.QueryResult | pg.QueryResult[]
      const last = Array.isArray(began) ? began[began.length - 1]! : began
      const result = await work(client, Number((last.rows[0] as {size?: string} | undefined)?.size ?? 0))
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true
      })
      if (error instanceof AuditError) throw error
      // A COMMIT whose answer was lost may have committed: the caller answers 503 either way,
      // and a retry with the same ids is answered from what was stored (docs/api.md).
      throw new AuditError('storage_unavailable', `nothing was recorded: ${(error as Error).message}`, {cause: error})
    } finally {
      this.#release(client, broken)
    }
  }

  async count(): Promise<number> {
    const [row] = await this.#query<{size: string}>('SELECT size FROM log_state')
    return Number(row!.size)
  }

  /**
   * One group commit in four round trips (docs/scaling.md: the lock is held for the last three): the
   * transaction begins with the log's row lock, one statement reads what sequencing needs, one
   * statement writes everything, and COMMIT. The write is prepared once per connection (its plan has no
   * choice to make); the read is planned for each commit (docs/postgres.md, Plans).
   */
  async recordEvents(requests: SequenceRequest[]): Promise<SequenceResult> {
    // Made from content alone before the lock (docs/scaling.md); an id's first event is the one recorded.
    const searches = new Map<string, string>()
    for (const {items} of requests)
      for (const {event} of items) if (!searches.has(event.id)) searches.set(event.id, searchColumn(event))
    let locked = 0
    const recorded = await this.#transaction(async (client, nextIndex) => {
      locked = performance.now()
      const wanted = edgeTiles(nextIndex)
      const {
        rows: [read],
      } = await client.query<{heads: [string, string, string][] | null; existing: string[] | null; edge: TileJson}>({
        // Not prepared, so planned for these values and the tables' current size: a generic plan made
        // while `events` was nearly empty scans it whole, and would be kept as it grows (docs/postgres.md, Plans).
        text: READ_FOR_APPEND,
        values: [requestedAgents(requests), requestedIds(requests), ...tileKeys(wanted)],
      })
      const heads = new Map<string, AgentHead>()
      for (const [agent_id, last_sequence, head_hash] of read!.heads ?? [])
        heads.set(agent_id, {agent_id, last_sequence: Number(last_sequence), head_hash})
      const existing = new Map<string, StoredEvent>()
      for (const row of read!.existing ?? []) {
        const event = toEvent(row)
        existing.set(event.id, event)
      }
      const keys = await this.#keys.upTo(heads, async (after) => {
        const text = `SELECT ${EVENT_JSON} AS row FROM events WHERE agent_id = $1 AND sequence > $2 ORDER BY sequence`
        const {rows} = await client.query<{row: string}>({
          name: 'audit_trail_key_events',
          text,
          values: [KEYS_AGENT, after],
        })
        return rows.map((r) => toEvent(r.row))
      })
      const result = sequenceEvents(requests, {nextIndex, heads, existing, keys})
      if (result.recorded.length > 0) await this.#write(client, result.recorded, tilesOf(read!.edge), searches)
      return result
    }, LOCK_LOG)
    this.onGroupCommit?.(performance.now() - locked, recorded.recorded.length)
    return recorded
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    if (events.length === 0) return
    await this.#transaction(async (client, size) => {
      if (events[0]!.index !== size) {
        throw new AuditError('internal_error', `event index ${events[0]!.index} given where ${size} is next`)
      }
      const {
        rows: [read],
      } = await client.query<{edge: TileJson}>({
        // Planned for each call, as READ_FOR_APPEND is.
        text: READ_EDGE,
        values: tileKeys(edgeTiles(size)),
      })
      await this.#write(client, events, tilesOf(read!.edge))
    }, LOCK_LOG)
  }

  /**
   * Inserts events in index order with what moves with them, in one statement: the aggregates,
   * the tiles the new leaves change (`edge`: the tree's right edge before them), the size, and the
   * notification, delivered at commit in commit order to every listening process.
   */
  async #write(
    client: pg.PoolClient,
    events: StoredEvent[],
    edge: Map<string, Buffer>,
    searches?: ReadonlyMap<string, string>,
  ): Promise<void> {
    const columns: unknown[][] = EVENT_COLUMNS.map(() => [])
    for (const event of events)
      eventColumns(event, searches?.get(event.id)).forEach((value, i) => columns[i]!.push(value))
    const aggregates = aggregateRows(events)
    const agentColumns = [0, 1, 2, 3, 4, 5, 6].map((i) => aggregates.agents.map((row) => row[i]))
    const countColumns = [0, 1, 2].map((i) => aggregates.counts.map((row) => row[i]))
    const first = events[0]!.index
    const tiles = tilesAppending(
      first,
      edge,
      events.map((event) => event.hash),
    )
    const size = events[events.length - 1]!.index + 1
    await client.query({
      name: 'audit_trail_append',
      text: APPEND,
      values: [
        ...columns,
        ...agentColumns,
        ...countColumns,
        tiles.map((t) => t.level),
        tiles.map((t) => t.index),
        tiles.map((t) => t.hashes),
        size,
        CHANNEL,
        String(size),
      ],
    })
  }

  async readTreeTiles(tiles: readonly {level: number; index: number}[]): Promise<TileRow[]> {
    if (tiles.length === 0) return []
    const rows = await this.#query<{level: number; idx: string; hashes: Buffer}>(
      `SELECT level, idx, hashes FROM merkle_tiles
       WHERE (level, idx) IN (SELECT * FROM unnest($1::smallint[], $2::bigint[]))`,
      [tiles.map((t) => t.level), tiles.map((t) => t.index)],
    )
    return rows.map((row) => ({level: row.level, index: Number(row.idx), hashes: row.hashes}))
  }

  async watch(
    grown: (size?: number) => void,
    timestamped?: (record: TimestampRecord) => void,
    erased?: () => void,
  ): Promise<() => Promise<void>> {
    let stopped = false
    let client: pg.Client | undefined
    let retry: NodeJS.Timeout | undefined
    // Timestamps of other processes, one read at a time so that they are announced in turn.
    const [latest] = await this.#query<{n: string}>('SELECT coalesce(max(position), 0) AS n FROM timestamps')
    let seen = Number(latest!.n)
    let reading = Promise.resolve()
    const announce = (sql: string, param: number) => {
      reading = reading
        .then(async () => {
          const select = `SELECT position, ${TIMESTAMP_COLUMNS} FROM timestamps ${sql}`
          const rows = await this.#query<TimestampRow>(select, [param])
          for (const row of rows) {
            const position = Number(row.position)
            seen = Math.max(seen, position)
            if (!this.#issued.delete(position)) timestamped?.(toTimestampRecord(row))
          }
        })
        .catch(() => undefined)
    }
    const listen = async (): Promise<void> => {
      const next = new pg.Client({connectionString: this.databaseUrl})
      next.on('notification', (message) => {
        if (message.channel === CHANNEL) grown(Number(message.payload))
        else if (message.channel === ERASURE_CHANNEL) erased?.()
        else announce('WHERE position = $1', Number(message.payload))
      })
      next.on('error', () => undefined)
      next.on('end', () => {
        if (stopped) return
        client = undefined
        retry = setTimeout(() => void listen().catch(() => undefined), RELISTEN_MS)
      })
      try {
        await next.connect()
        await next.query(`LISTEN ${CHANNEL}`)
        await next.query(`LISTEN ${TIMESTAMP_CHANNEL}`)
        await next.query(`LISTEN ${ERASURE_CHANNEL}`)
      } catch (error) {
        await next.end().catch(() => undefined)
        throw error
      }
      client = next
      // Whatever was committed while no connection listened is read now.
      grown()
      erased?.()
      announce('WHERE position > $1 ORDER BY position', seen)
    }
    await listen()
    return async () => {
      stopped = true
      clearTimeout(retry)
      await client?.end().catch(() => undefined)
    }
  }

  async getEvent(id: string): Promise<StoredEvent | undefined> {
    const [row] = await this.#query<{row: string}>(`SELECT ${EVENT_JSON} AS row FROM events WHERE id = $1`, [id])
    return row === undefined ? undefined : toEvent(row.row)
  }

  async getEvents(ids: string[]): Promise<Map<string, StoredEvent>> {
    const found = new Map<string, StoredEvent>()
    if (ids.length === 0) return found
    for (const {row} of await this.#query<{row: string}>(EVENT_ROWS_BY_ID(1), [ids])) {
      const event = toEvent(row)
      found.set(event.id, event)
    }
    return found
  }

  async queryEvents(filter: EventFilter, page: Page): Promise<PageResult<StoredEvent>> {
    const where = whereOf(filter)
    // A total that only counting the matches gives: then the page comes with it (counted-page.ts).
    if (where.params.length > 0 && aggregateCounted(filter) === undefined)
      return this.#countedPage(where.sql, where.params, page)
    const n = where.params.length
    // The page and its total on two pooled connections at once.
    const [rows, total] = await Promise.all([
      this.#query<{row: string}>(
        `SELECT ${EVENT_JSON} AS row FROM events ${where.sql} ORDER BY "index" LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...where.params, page.limit, page.offset],
      ),
      this.countEvents(filter),
    ])
    return {total, items: rows.map((r) => toEvent(r.row))}
  }

  /** As the sql.js store counts (filters.ts, aggregateCounted): one agent or one action type from its aggregate. */
  async countEvents(filter: EventFilter): Promise<number> {
    const where = whereOf(filter)
    if (where.params.length === 0) return this.count()
    const counted = aggregateCounted(filter)
    const [row] =
      counted === undefined
        ? await this.#query<{n: string}>(`SELECT count(*) AS n FROM events ${where.sql}`, where.params)
        : 'agent_id' in counted
          ? await this.#query<{n: string}>(
              'SELECT coalesce((SELECT event_count FROM agents WHERE agent_id = $1), 0) AS n',
              [counted.agent_id],
            )
          : await this.#query<{n: string}>(
              "SELECT coalesce((SELECT count FROM action_counts WHERE field = 'action_type' AND value = $1), 0) AS n",
              [counted.action_type],
            )
    return Number(row!.n)
  }

  async searchEvents(query: SearchQuery, page: Page): Promise<PageResult<StoredEvent>> {
    const tsquery = searchQuery(query.terms)
    if (tsquery === undefined) return {total: 0, items: []}
    return this.#countedPage('WHERE search @@ $1::tsquery', [tsquery], page)
  }

  /** The page and total of a condition in one statement (counted-page.ts). */
  async #countedPage(where: string, params: unknown[], page: Page): Promise<PageResult<StoredEvent>> {
    const [row] = await this.#query<CountedPageRow>(countedPageSql(where, params.length), [
      ...params,
      page.limit,
      page.offset,
    ])
    return {total: Number(row!.total), items: (row!.rows ?? []).map(toEvent)}
  }

  /** The text index is kept with every insert: nothing to prepare. */
  async prepareSearch(): Promise<void> {}

  async *scanEvents(options: ScanOptions = {}): AsyncIterable<StoredEvent> {
    for await (const rows of this.#scan(EVENT_JSON, options)) yield* rows.map(toEvent)
  }

  scanHashedEvents(options: ScanOptions = {}): AsyncIterable<HashedBatch> {
    // A large stretch of the log, split by index range over the cores (range-scan.ts).
    const span = options.toIndex === undefined ? 0 : options.toIndex - (options.fromIndex ?? 0)
    if (isEmptyFilter(options.filter ?? {}) && span >= THREAD_FROM_EVENTS)
      return rangeHashedBatches(this.databaseUrl, options.fromIndex, options.toIndex!)
    const counted = (async () => {
      const where = whereOf(options.filter, {fromIndex: options.fromIndex, toIndex: options.toIndex})
      const [row] = await this.#query<{n: string}>(`SELECT count(*) AS n FROM events ${where.sql}`, where.params)
      return Number(row!.n)
    })()
    const scan = this.#scan(EVENT_JSON, options)
    return {
      async *[Symbol.asyncIterator]() {
        yield* hashedBatches(scan, await counted, undefined, POSTGRES_HASHING, options.signatureKeys)
      },
    }
  }

  async *scanEventHeaders(options: ScanOptions = {}): AsyncIterable<EventHeader[]> {
    for await (const rows of this.#scan(HEADER_JSON, options)) yield rows.map(toHeaderOrEvent)
  }

  /** Rows in index order, SCAN_BATCH (or options.batchSize, when smaller) per query, keyed on the last index read. */
  async *#scan(columns: string, options: ScanOptions): AsyncIterable<string[]> {
    const limit = Math.max(1, Math.min(options.batchSize ?? SCAN_BATCH, SCAN_BATCH))
    // Without a filter, each query also ends `limit` indexes on (indexes are dense): that bounds the
    // rows it touches whatever plan the server picks, whose estimates for the newest rows lag behind.
    const windowed = options.toIndex !== undefined && isEmptyFilter(options.filter ?? {})
    type Batch = {rows: {row: string; index: string}[]; end: number | undefined}
    const read = async (from: number | undefined): Promise<Batch> => {
      const end = windowed ? Math.min((from ?? 0) + limit, options.toIndex!) : options.toIndex
      const where = whereOf(options.filter, {fromIndex: from, toIndex: end})
      const rows = await this.#query<{row: string; index: string}>(
        `SELECT ${columns} AS row, "index" FROM events ${where.sql} ORDER BY "index" LIMIT ${limit}`,
        where.params,
      )
      return {rows, end}
    }
    let next: Promise<Batch> | undefined = read(options.fromIndex)
    try {
      while (next !== undefined) {
        const {rows, end}: Batch = await next
        const after: number | undefined =
          rows.length === limit ? Number(rows[rows.length - 1]!.index) + 1 : windowed ? end : undefined
        // The server reads the next batch while the caller works on this one.
        next = after !== undefined && (!windowed || after < options.toIndex!) ? read(after) : undefined
        if (rows.length > 0) yield rows.map((r) => r.row)
      }
    } finally {
      // A caller that stops early leaves a read in flight: its outcome is of no use to anyone.
      next?.catch(() => undefined)
    }
  }

  async eventHashes(fromIndex = 0, toIndex?: number): Promise<string[]> {
    const end = toIndex ?? (await this.count())
    const hashes: string[] = []
    for (let start = fromIndex; start < end; start += HASH_CHUNK) {
      const rows = await this.#query<{hash: string}>(
        'SELECT hash FROM events WHERE "index" >= $1 AND "index" < $2 ORDER BY "index"',
        [start, Math.min(start + HASH_CHUNK, end)],
      )
      for (const row of rows) hashes.push(row.hash)
    }
    return hashes
  }

  async *eventHashChunks(): AsyncIterable<{count: number; hex: string}> {
    const end = await this.count()
    for (let start = 0; start < end; start += HASH_CHUNK) {
      const [row] = await this.#query<{n: string; hex: string | null; ok: boolean}>(
        `SELECT count(*) AS n, string_agg(hash, '' ORDER BY "index") AS hex,
         coalesce(bool_and(length(hash) = 64), true) AS ok
         FROM events WHERE "index" >= $1 AND "index" < $2`,
        [start, Math.min(start + HASH_CHUNK, end)],
      )
      const count = Number(row!.n)
      if (count > 0) yield {count, hex: row!.ok ? (row!.hex ?? '') : ''}
    }
  }

  async agentHeads(): Promise<AgentHead[]> {
    return (await this.chainHeads()).heads
  }

  async chainHeads(): Promise<{heads: AgentHead[]; size: number}> {
    // One statement, one snapshot: heads and size from the same committed state.
    const [row] = await this.#query<{
      size: string
      heads: AgentHead[] | null
    }>(`SELECT (SELECT size FROM log_state) AS size,
      (SELECT json_agg(json_build_object('agent_id', agent_id, 'last_sequence', last_sequence,
       'head_hash', head_hash) ORDER BY agent_id)
       FROM agents) AS heads`)
    return {heads: row!.heads ?? [], size: Number(row!.size)}
  }

  async agentSummaries(): Promise<AgentSummary[]> {
    const rows = await this.#query<{
      summary: AgentSummary
    }>(`SELECT json_build_object('agent_id', agent_id, 'event_count', event_count,
      'first_activity', first_activity, 'last_activity', last_activity,
      'last_sequence', last_sequence, 'head_hash', head_hash) AS summary
      FROM agents ORDER BY agent_id`)
    return rows.map((r) => r.summary)
  }

  async stats(recentSince: string): Promise<StoreStats> {
    const [row] = await this.#query<{
      stats: Omit<StoreStats, 'by_action_type' | 'by_action_status'>
      counts: [string, string, number][] | null
    }>(
      `SELECT json_build_object(
         'total_events', (SELECT size FROM log_state),
         'events_last_24h', (SELECT count(*) FROM events WHERE recorded_at >= $1),
         'active_agents', (SELECT count(*) FROM agents WHERE last_recorded_at >= $1),
         'total_agents', (SELECT count(*) FROM agents)) AS stats,
       (SELECT json_agg(json_build_array(field, value, count) ORDER BY field, value) FROM action_counts) AS counts`,
      [recentSince],
    )
    const byActionType: Record<string, number> = {}
    const byActionStatus: Record<string, number> = {}
    for (const [field, value, count] of row!.counts ?? [])
      (field === 'action_type' ? byActionType : byActionStatus)[value] = count
    return {...row!.stats, by_action_type: byActionType, by_action_status: byActionStatus}
  }

  async readTsaMaterial(): Promise<TsaMaterial | undefined> {
    const [row] = await this.#query<{ca_cert_pem: string; tsa_cert_pem: string; tsa_key_pem: string}>(
      'SELECT ca_cert_pem, tsa_cert_pem, tsa_key_pem FROM embedded_tsa',
    )
    return row === undefined
      ? undefined
      : {caCertPem: row.ca_cert_pem, tsaCertPem: row.tsa_cert_pem, tsaKeyPem: row.tsa_key_pem}
  }

  async saveTsaMaterial(material: TsaMaterial): Promise<TsaMaterial> {
    // Of processes starting together the first insert wins; the others read the winner's.
    await this.#query(
      'INSERT INTO embedded_tsa (ca_cert_pem, tsa_cert_pem, tsa_key_pem) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [material.caCertPem, material.tsaCertPem, material.tsaKeyPem],
    )
    return (await this.readTsaMaterial())!
  }

  readonly #identityQuery: Query = (sql, params) => this.#query(sql, params)

  readTsaAnchors(): Promise<string[]> {
    return readTsaAnchors(this.#identityQuery)
  }

  addTsaAnchors(pems: string[]): Promise<void> {
    return addTsaAnchors(this.#identityQuery, pems)
  }

  adoptIdentity(identity: LogIdentityMaterial): Promise<IdentityConflict> {
    return this.#transaction((client) =>
      adoptIdentity(async (sql, params) => (await client.query(sql, params)).rows, identity),
    )
  }

  async claimTurn(name: string, periodMs: number): Promise<boolean> {
    // One statement: a second process waits for the first's row lock, then sees its new taken_at.
    const rows = await this.#query(
      `INSERT INTO turns (name, taken_at) VALUES ($1, now())
      ON CONFLICT (name) DO UPDATE SET taken_at = now() WHERE turns.taken_at <= now() - $2 * interval '1 millisecond'
      RETURNING name`,
      [name, periodMs],
    )
    return rows.length === 1
  }

  /** Positions of the timestamps this process issued: its own feed has announced them already. */
  readonly #issued = new Set<number>()

  async appendTimestamp(record: TimestampRecord): Promise<void> {
    await this.#transaction(async (client) => {
      const {
        rows: [row],
      } = await client.query<{position: string}>(
        `INSERT INTO timestamps (${TIMESTAMP_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) RETURNING position`,
        [record.merkle_root, record.tree_size, record.timestamp, record.tsa, record.token, record.reset_reason ?? null],
      )
      this.#issued.add(Number(row!.position))
      // Delivered at commit to every listening process, whose stream announces it.
      await client.query('SELECT pg_notify($1, $2)', [TIMESTAMP_CHANNEL, row!.position])
    })
  }

  async erasureCandidates(
    selection: ErasureSelection,
    members: readonly PayloadMemberName[],
    erasableOnly?: boolean,
  ): Promise<ErasureCandidate[]> {
    return this.#withClient((client) => erasureCandidates(client, selection, members, erasableOnly))
  }

  /** This process's erasures one after the other; other processes' wait on the advisory lock (erasure.ts). */
  #erasures: Promise<unknown> = Promise.resolve()

  erase(plan: () => Promise<ErasurePlan | undefined>): Promise<ErasureTaken | undefined> {
    const run = this.#erasures.then(() =>
      this.#withClient((client) =>
        withErasureLock(client, async () => {
          await completePending(client)
          const planned = await plan()
          if (planned === undefined) return undefined
          await addPending(client, planned.intent)
          let erasure: StoredEvent
          try {
            erasure = await planned.record()
          } catch (error) {
            await removePending(client, planned.intent.id)
            throw error
          }
          const taken = await applyErasure(client, planned.intent)
          // Any a process that died meanwhile left (it could not take the lock to complete them).
          await completePending(client)
          return {erasure, ...taken}
        }),
      ),
    )
    this.#erasures = run.catch(() => undefined)
    return run
  }

  /** `work` on one connection of its own; connection failures become storage_unavailable. */
  async #withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect('')
    let broken = false
    try {
      return await work(client)
    } catch (error) {
      broken = isConnectionError(error)
      throw this.#mapped(error)
    } finally {
      this.#release(client, broken)
    }
  }

  async listTimestamps(): Promise<TimestampRecord[]> {
    const rows = await this.#query<TimestampRow>(`SELECT ${TIMESTAMP_COLUMNS} FROM timestamps ORDER BY position`)
    return rows.map(toTimestampRecord)
  }

  async appendCheckpoint(record: CheckpointRecord): Promise<void> {
    await this.#query(
      'INSERT INTO checkpoints (tree_size, root, note, cosignatures, signed_at) VALUES ($1, $2, $3, $4, $5)',
      [record.tree_size, record.root, record.note, JSON.stringify(record.cosignatures), record.signed_at],
    )
  }

  async appendCosignatures(treeSize: number, lines: string[]): Promise<void> {
    await this.#transaction(async (client) => {
      const {rows} = await client.query<{position: string; cosignatures: string[]}>(
        'SELECT position, cosignatures FROM checkpoints WHERE tree_size = $1 ORDER BY position DESC LIMIT 1 FOR UPDATE',
        [treeSize],
      )
      if (rows.length === 0) throw new AuditError('not_found', `no checkpoint of tree size ${treeSize}`)
      const held = rows[0]!.cosignatures
      const merged = [...held, ...lines.filter((line) => !held.includes(line))]
      await client.query('UPDATE checkpoints SET cosignatures = $1 WHERE position = $2', [
        JSON.stringify(merged),
        rows[0]!.position,
      ])
    })
  }

  async listCheckpoints(): Promise<CheckpointRecord[]> {
    const rows = await this.#query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY position`)
    return rows.map(toCheckpointRecord)
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    const rows = await this.#query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY position DESC LIMIT 1`,
    )
    return rows.map(toCheckpointRecord)[0]
  }

  async logKey(create: () => string): Promise<string> {
    // Of processes starting together the first insert wins; the others read the winner's.
    await this.#query('INSERT INTO log_key (private_key_pem) VALUES ($1) ON CONFLICT DO NOTHING', [create()])
    const [row] = await this.#query<{private_key_pem: string}>('SELECT private_key_pem FROM log_key')
    return row!.private_key_pem
  }

  /** Every commit is durable in the database: there is no snapshot to write. */
  async snapshot(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.pool.end()
  }
}

const TIMESTAMP_COLUMNS = 'merkle_root, tree_size, "timestamp", tsa, token, reset_reason'
type TimestampRow = {
  position?: string
  merkle_root: string
  tree_size: string
  timestamp: string
  tsa: string
  token: string
  reset_reason: string | null
}
function toTimestampRecord(r: TimestampRow): TimestampRecord {
  const record: TimestampRecord = {
    merkle_root: r.merkle_root,
    tree_size: Number(r.tree_size),
    timestamp: r.timestamp,
    tsa: r.tsa,
    token: r.token,
  }
  if (r.reset_reason !== null) record.reset_reason = r.reset_reason
  return record
}

const CHECKPOINT_COLUMNS = 'tree_size, root, note, cosignatures, signed_at'
type CheckpointRow = {
  tree_size: string
  root: string
  note: string
  cosignatures: string[]
  signed_at: string
}
function toCheckpointRecord(row: CheckpointRow): CheckpointRecord {
  return {
    tree_size: Number(row.tree_size),
    root: row.root,
    note: row.note,
    cosignatures: row.cosignatures,
    signed_at: row.signed_at,
  }
}
