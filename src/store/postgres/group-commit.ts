/**
 * The write path (docs/postgres.md, Several writers, one log): every write is one transaction that
 * first locks the one-row `log_state` FOR UPDATE, then reads the heads and ids it must check,
 * sequences (core/event/sequence.ts), inserts the events with one multi-row statement, updates
 * heads, counts and size, extends the Merkle tree's hash tiles, and commits. The row lock orders
 * writers, so commit order is index order and indexes run 0..n-1 without gaps.
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
import type {KeyState} from '../agent-key-state.js'
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
 * Begins a group commit: the log's one row, locked until COMMIT, so that indexes are given in commit
 * order without a gap (never a SEQUENCE: a rollback would leave one). Then, in a statement of its
 * own, so that it sees what committed while the lock was awaited (READ COMMITTED takes a snapshot
 * per statement), the size and whether the trail is sealed (docs/trails.md, Sealing).
 */
export const LOCK_LOG = `BEGIN; SELECT FROM log_state FOR UPDATE;
  SELECT size, EXISTS (SELECT FROM trail_state WHERE sealed_at IS NOT NULL) AS sealed FROM log_state`

/** Under the lock: the agents' heads, the events already stored under requested ids, the tree's edge. */
const READ_FOR_APPEND = `SELECT
  (SELECT json_agg(json_build_array(agent_id, last_sequence::text, head_hash)) FROM agents
    WHERE agent_id = ANY($1::text[])) AS heads,
  (SELECT array_agg(row) FROM (${EVENT_ROWS_BY_ID(2)}) AS existing) AS existing,
  (${edgeTilesJson('$3', '$4')}) AS edge`

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
  tile_rows AS (${upsertTiles(tiles[0]!, tiles[1]!, tiles[2]!)}),
  state AS (UPDATE log_state SET size = ${size})
  SELECT pg_notify(${channel}, ${payload})`
})()

/**
 * One group commit in four round trips (docs/scaling.md: the lock is held for the last three): the
 * transaction begins with the log's row lock, one statement reads what sequencing needs, one
 * statement writes everything, and COMMIT. The write is prepared once per connection (its plan has no
 * choice to make); the read is planned for each commit (docs/postgres.md, Plans). `keys` are the
 * agents' keys, caught up under the lock; `onGroupCommit` is told how long the lock was held.
 */
export async function recordEvents(
  db: Database,
  scope: TrailScope,
  keys: KeyState,
  requests: SequenceRequest[],
  onGroupCommit?: (lockHeldMs: number, events: number) => void,
): Promise<SequenceResult> {
  // Made from content alone before the lock (docs/scaling.md); an id's first event is the one recorded.
  const searches = new Map<string, string>()
  for (const {items} of requests)
    for (const {event} of items) if (!searches.has(event.id)) searches.set(event.id, searchColumn(event))
  let locked = 0
  const recorded = await db.transaction(async (client, nextIndex, head) => {
    locked = performance.now()
    if (head.sealed === true) throw trailSealedError(scope.name)
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
    const agentKeys = await keys.upTo(heads, async (after) => {
      const text = `SELECT ${EVENT_JSON} AS row FROM events WHERE agent_id = $1 AND sequence > $2 ORDER BY sequence`
      const {rows} = await client.query<{row: string}>({
        name: 'audit_trail_key_events',
        text,
        values: [KEYS_AGENT, after],
      })
      return rows.map((r) => toEvent(r.row))
    })
    const result = sequenceEvents(requests, {nextIndex, heads, existing, keys: agentKeys})
    if (result.recorded.length > 0) await write(client, scope, result.recorded, tilesOf(read!.edge), searches)
    return result
  }, LOCK_LOG)
  onGroupCommit?.(performance.now() - locked, recorded.recorded.length)
  return recorded
}

/** Events sequenced elsewhere (a copy of another store), under the same lock; the first must be next. */
export async function appendEvents(db: Database, scope: TrailScope, events: StoredEvent[]): Promise<void> {
  if (events.length === 0) return
  await db.transaction(async (client, size) => {
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
    await write(client, scope, events, tilesOf(read!.edge))
  }, LOCK_LOG)
}

/**
 * Inserts events in index order with what moves with them, in one statement: the aggregates,
 * the tiles the new leaves change (`edge`: the tree's right edge before them), the size, and the
 * notification, delivered at commit in commit order to every listening process.
 */
async function write(
  client: pg.PoolClient,
  scope: TrailScope,
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
  const tiles = tilesAppending(
    events[0]!.index,
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
      ...tileColumns(tiles),
      size,
      scope.channels.events,
      String(size),
    ],
  })
}
