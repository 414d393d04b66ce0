/**
 * The write path (docs/postgres.md, Several writers, one log; docs/scaling.md): a group commit reads
 * without a lock what sequencing needs (the log's size, the heads, the ids it must check, the tree's
 * edge, in one statement and so one snapshot), sequences (core/event/sequence.ts), then writes in one
 * statement that commits on its own: it takes the one-row `log_state`'s lock by moving the size on
 * from the size it read, and writes nothing when another writer moved it first. The events, heads,
 * counts and the Merkle tree's hash tiles go in with it. The row lock orders writers, so commit order
 * is index order and indexes run 0..n-1 without gaps; it is held inside the server only, from that
 * update to the end of the commit. A group whose read another writer overtook is sequenced again
 * with the lock taken first, as every group was before.
 */
import type pg from 'pg'
import {AuditError} from '../../core/errors.js'
import {edgeTiles} from '../../core/merkle/index.js'
import {
  requestedAgents,
  requestedIds,
  sequenceEvents,
  type SequenceRequest,
  type SequenceResult,
} from '../../core/event/index.js'
import {KEYS_AGENT} from '../../core/signature/index.js'
import {trailSealedError} from '../../core/trail/sealed.js'
import type {AgentHead, StoredEvent} from '../../core/types.js'
import {aggregateRows} from '../aggregates.js'
import {toEvent} from '../event-row.js'
import {KeyState} from '../agent-key-state.js'
import type {Database} from './database.js'
import {EVENT_ROWS_BY_ID} from './queries.js'
import {EVENT_COLUMNS, EVENT_JSON, eventColumns, INSERT_EVENTS, searchColumn} from './schema.js'
import {
  edgeTilesJson,
  READ_EDGE,
  tileColumns,
  tileKeys,
  tilesAppending,
  tilesOf,
  upsertTiles,
  type TileJson,
} from './tiles.js'
import type {TrailScope} from './trail-scope.js'

/**
 * Begins a group commit the other way: the log's one row, locked until COMMIT, before anything is
 * read (never a SEQUENCE for indexes: a rollback would leave a gap). Then, in a statement of its
 * own, so that it sees what committed while the lock was awaited (READ COMMITTED takes a snapshot
 * per statement), the size and whether the trail is sealed (docs/trails.md, Sealing).
 */
export const LOCK_LOG = `BEGIN; SELECT FROM log_state FOR UPDATE; SELECT size, sealed FROM log_state`

/**
 * The log's size, the agents' heads, the events already stored under requested ids and the tiles of
 * the tree's edge at the size given in $3 and $4, in one snapshot.
 */
const READ_FOR_APPEND = `SELECT (SELECT size FROM log_state) AS size, (SELECT sealed FROM log_state) AS sealed,
  (SELECT json_agg(json_build_array(agent_id, last_sequence::text, head_hash)) FROM agents
    WHERE agent_id = ANY($1::text[])) AS heads,
  (SELECT array_agg(row) FROM (${EVENT_ROWS_BY_ID(2)}) AS existing) AS existing,
  (${edgeTilesJson('$3', '$4')}) AS edge`

/** Written only when `log_state` moved from the size read to the new one (`state`): the lock was taken there. */
const WRITTEN = 'WHERE EXISTS (SELECT FROM state)'

/**
 * The events' columns, the agents' and counts' rows, the tiles, the size read and the new size, and
 * the notification; its one row (the notification's) says that it wrote, no row that it did not.
 */
const APPEND = (() => {
  let n = EVENT_COLUMNS.length
  const next = (count: number) => Array.from({length: count}, () => `$${++n}`)
  const [agents, counts, tiles, [read, size, channel, payload]] = [next(7), next(3), next(3), next(4)]
  // A sealed trail's row fails the condition, also when the seal committed while this waited for
  // the row: PostgreSQL checks it again on the row's newest version (docs/trails.md, Sealing).
  return `WITH state AS (UPDATE log_state SET size = ${size} WHERE size = ${read} AND NOT sealed RETURNING size),
  inserted AS (${INSERT_EVENTS} ${WRITTEN}),
  agent_rows AS (INSERT INTO agents (agent_id, event_count, first_activity, last_activity,
      last_sequence, head_hash, last_recorded_at)
    SELECT * FROM unnest(${agents[0]}::text[], ${agents[1]}::bigint[], ${agents[2]}::text[], ${agents[3]}::text[],
      ${agents[4]}::bigint[], ${agents[5]}::text[], ${agents[6]}::text[]) ${WRITTEN}
    ON CONFLICT (agent_id) DO UPDATE SET
      event_count = agents.event_count + excluded.event_count,
      first_activity = least(agents.first_activity, excluded.first_activity),
      last_activity = greatest(agents.last_activity, excluded.last_activity),
      head_hash = CASE WHEN excluded.last_sequence >= agents.last_sequence
      THEN excluded.head_hash ELSE agents.head_hash END,
      last_sequence = greatest(agents.last_sequence, excluded.last_sequence),
      last_recorded_at = greatest(agents.last_recorded_at, excluded.last_recorded_at)),
  count_rows AS (INSERT INTO action_counts (field, value, count)
    SELECT * FROM unnest(${counts[0]}::text[], ${counts[1]}::text[], ${counts[2]}::bigint[]) ${WRITTEN}
    ON CONFLICT (field, value) DO UPDATE SET count = action_counts.count + excluded.count),
  tile_rows AS (${upsertTiles(tiles[0]!, tiles[1]!, tiles[2]!, WRITTEN)})
  SELECT pg_notify(${channel}, ${payload}) FROM state`
})()

/** What sequencing needs of the log, read in one snapshot. */
interface LogRead {
  size: number
  heads: Map<string, AgentHead>
  existing: Map<string, StoredEvent>
  /** The tiles of edgeTiles(size), by tileKey. */
  edge: Map<string, Buffer>
}

type Told = (lockHeldMs: number, events: number) => void

/**
 * The group commits of one process, one at a time (a second one would only overtake the first's
 * read). `onGroupCommit` is told of each how long its write took, which bounds the lock's hold.
 */
export class GroupCommits {
  /** The agents' keys, caught up with every read (the keys agent's head says whether they are current). */
  readonly #keys = new KeyState()
  /** The log's size as this process last read or wrote it: which edge tiles the next read asks for. */
  #size = 0
  #turn: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly db: Database,
    private readonly scope: TrailScope,
    private readonly onGroupCommit?: Told,
  ) {}

  /** Sequences and records the requests (EventStore.recordEvents). */
  record(requests: SequenceRequest[]): Promise<SequenceResult> {
    const run = this.#turn.then(() => this.#record(requests))
    this.#turn = run.catch(() => undefined)
    return run
  }

  /** Events sequenced elsewhere (a copy of another store), under the lock; the first must be next. */
  async append(events: StoredEvent[]): Promise<void> {
    if (events.length === 0) return
    await this.db.transaction(async (client, size) => {
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
      await writeUnderLock(client, this.scope, {size, edge: tilesOf(read!.edge)}, events)
    }, LOCK_LOG)
  }

  async #record(requests: SequenceRequest[]): Promise<SequenceResult> {
    // Made from content alone before the lock (docs/scaling.md); an id's first event is the one recorded.
    const searches = new Map<string, string>()
    for (const {items} of requests)
      for (const {event} of items) if (!searches.has(event.id)) searches.set(event.id, searchColumn(event))
    const done = await this.db.statements(async (client) => {
      const read = await this.#read(client, requests)
      const result = await this.#sequence(client, requests, read)
      if (result.recorded.length === 0) return result
      const writeMs = await write(client, this.scope, read, result.recorded, searches)
      if (writeMs === undefined) return undefined
      this.#recorded(result, writeMs)
      return result
    })
    if (done !== undefined) return done
    // Another writer appended between the read and the write, or the trail was sealed, and nothing
    // was written: again, locked first.
    let locked = 0
    const result = await this.db.transaction(async (client, size, head) => {
      locked = performance.now()
      if (head.sealed === true) throw trailSealedError(this.scope.name)
      this.#size = size
      const read = await this.#read(client, requests)
      const sequenced = await this.#sequence(client, requests, read)
      if (sequenced.recorded.length > 0) await writeUnderLock(client, this.scope, read, sequenced.recorded, searches)
      return sequenced
    }, LOCK_LOG)
    this.#recorded(result, performance.now() - locked)
    return result
  }

  /** After a group commit that held the lock for `heldMs` at most. */
  #recorded(result: SequenceResult, heldMs: number): void {
    if (result.recorded.length === 0) return
    this.#size = result.recorded[result.recorded.length - 1]!.index + 1
    this.onGroupCommit?.(heldMs, result.recorded.length)
  }

  /** The log as one snapshot has it; read again when the size is not the one whose edge tiles were asked for. */
  async #read(client: pg.PoolClient, requests: SequenceRequest[]): Promise<LogRead> {
    for (;;) {
      const {
        rows: [read],
      } = await client.query<{
        size: string
        heads: [string, string, string][] | null
        existing: string[] | null
        edge: TileJson
        sealed: boolean
      }>({
        // Not prepared, so planned for these values and the tables' current size: a generic plan made
        // while `events` was nearly empty scans it whole, and would be kept as it grows (docs/postgres.md, Plans).
        text: READ_FOR_APPEND,
        values: [requestedAgents(requests), requestedIds(requests), ...tileKeys(edgeTiles(this.#size))],
      })
      // Refused before sequencing, as under the lock; a seal after this read fails the write's condition.
      if (read!.sealed) throw trailSealedError(this.scope.name)
      const size = Number(read!.size)
      if (size !== this.#size) {
        this.#size = size
        continue
      }
      const heads = new Map<string, AgentHead>()
      for (const [agent_id, last_sequence, head_hash] of read!.heads ?? [])
        heads.set(agent_id, {agent_id, last_sequence: Number(last_sequence), head_hash})
      const existing = new Map<string, StoredEvent>()
      for (const row of read!.existing ?? []) {
        const event = toEvent(row)
        existing.set(event.id, event)
      }
      return {size, heads, existing, edge: tilesOf(read!.edge)}
    }
  }

  /** The requests sequenced after `read`, with the agents' keys as of its size. */
  async #sequence(client: pg.PoolClient, requests: SequenceRequest[], read: LogRead): Promise<SequenceResult> {
    const keys = await this.#keys.upTo(read.heads, async (after) => {
      const {rows} = await client.query<{row: string}>({
        name: 'audit_trail_key_events',
        text: `SELECT ${EVENT_JSON} AS row FROM events WHERE agent_id = $1 AND sequence > $2 AND "index" < $3
          ORDER BY sequence`,
        values: [KEYS_AGENT, after, read.size],
      })
      return rows.map((r) => toEvent(r.row))
    })
    return sequenceEvents(requests, {nextIndex: read.size, heads: read.heads, existing: read.existing, keys})
  }
}

/** write() where the lock is held already, so that the size cannot have moved. */
async function writeUnderLock(
  client: pg.PoolClient,
  scope: TrailScope,
  read: Pick<LogRead, 'size' | 'edge'>,
  events: StoredEvent[],
  searches?: ReadonlyMap<string, string>,
): Promise<void> {
  if ((await write(client, scope, read, events, searches)) === undefined)
    throw new AuditError('internal_error', `the log's size moved from ${read.size} under its lock`)
}

/**
 * Inserts events in index order with what moves with them, in one statement, if the log still holds
 * `read.size` events: the aggregates, the tiles the new leaves change (`read.edge`: the tree's right
 * edge before them), the size, and the notification, delivered at commit in commit order to every
 * listening process. Resolves with the statement's time in ms if it wrote, undefined if not. Prepared
 * once per connection (its plan has no choice to make).
 */
async function write(
  client: pg.PoolClient,
  scope: TrailScope,
  read: Pick<LogRead, 'size' | 'edge'>,
  events: StoredEvent[],
  searches?: ReadonlyMap<string, string>,
): Promise<number | undefined> {
  const columns: unknown[][] = EVENT_COLUMNS.map(() => [])
  for (const event of events)
    eventColumns(event, searches?.get(event.id)).forEach((value, i) => columns[i]!.push(value))
  const aggregates = aggregateRows(events)
  const agentColumns = [0, 1, 2, 3, 4, 5, 6].map((i) => aggregates.agents.map((row) => row[i]))
  const countColumns = [0, 1, 2].map((i) => aggregates.counts.map((row) => row[i]))
  const tiles = tilesAppending(
    read.size,
    read.edge,
    events.map((event) => event.hash),
  )
  const size = read.size + events.length
  const started = performance.now()
  const {rowCount} = await client.query({
    name: 'audit_trail_append',
    text: APPEND,
    values: [
      ...columns,
      ...agentColumns,
      ...countColumns,
      ...tileColumns(tiles),
      read.size,
      size,
      scope.channels.events,
      String(size),
    ],
  })
  return rowCount === 1 ? performance.now() - started : undefined
}
