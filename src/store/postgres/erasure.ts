/**
 * Erasure in the PostgreSQL store (docs/erasure.md). Every process may erase, one at a time: the
 * erasing session holds an advisory lock from the intent to the VACUUM, which PostgreSQL releases
 * should the process die, and whoever takes the lock next first completes what is pending in
 * `pending_erasures`. A batch of events is one transaction that rewrites each row (the member's
 * column, its salt, `erased`, `verbatim` and the `search` document together), then VACUUM frees the
 * old row versions.
 */
import type pg from 'pg'
import {eraseMembers, type ErasureIntent} from '../../core/erasure/index.js'
import {RESERVED_AGENT_PREFIX} from '../../core/event/index.js'
import type {PayloadMemberName} from '../../core/types.js'
import {toEvent} from '../event-row.js'
import type {ErasureCandidate, ErasureSelection} from '../store.js'
import {whereOf} from './postgres-store.js'
import {EVENT_COLUMNS, EVENT_JSON, eventColumns} from './schema.js'

/** pg_advisory_lock key of the log's erasures ('atre'). */
const ERASURE_LOCK = 0x61747265
/** Every process told of an erasure's batches (the page caches: services/event-queries.ts). */
export const ERASURE_CHANNEL = 'audit_trail_erasures'
const ERASE_BATCH = 2000

const SERVICE_EVENT = `left(agent_id, ${RESERVED_AGENT_PREFIX.length}) = '${RESERVED_AGENT_PREFIX}'`
const held = (m: PayloadMemberName) => `${m} IS NOT NULL`
const committed = (m: PayloadMemberName) => `(${m} IS NOT NULL AND coalesce(commitments ? '${m}', false))`
const gone = (m: PayloadMemberName) => `coalesce(erased ? '${m}', false)`
const any = (members: readonly PayloadMemberName[], condition: (m: PayloadMemberName) => string) =>
  `(${members.map(condition).join(' OR ')})`

/** Events an erasure of `members` takes something from. */
const erasable = (members: readonly PayloadMemberName[]) => [
  `NOT ${SERVICE_EVENT}`,
  'commitments IS NOT NULL',
  any(members, committed),
]

function where(selection: ErasureSelection, ...conditions: string[]): {sql: string; params: unknown[]} {
  const base = whereOf(selection.filter, {toIndex: selection.before_index})
  const params = [...base.params]
  const all = [base.sql.replace(/^WHERE /, '')]
  if (selection.recorded_before !== undefined) {
    params.push(selection.recorded_before)
    all.push(`recorded_at < $${params.length}`)
  }
  return {sql: `WHERE ${[...all, ...conditions].filter((c) => c !== '').join(' AND ')}`, params}
}

/** As the sql.js store's (store/erasure.ts): each event a selection matches that holds or held one of `members`. */
export async function erasureCandidates(
  client: pg.PoolClient,
  selection: ErasureSelection,
  members: readonly PayloadMemberName[],
  erasableOnly = false,
): Promise<ErasureCandidate[]> {
  const matched = erasableOnly ? erasable(members) : [`(${any(members, held)} OR ${any(members, gone)})`]
  const {sql, params} = where(selection, ...matched)
  const count = members.map((m) => `(CASE WHEN ${committed(m)} THEN 1 ELSE 0 END)`).join(' + ')
  const {rows} = await client.query<{index: string; id: string; status: ErasureCandidate['status']; n: number}>(
    `SELECT "index", id, CASE WHEN ${SERVICE_EVENT} THEN 'service_event' WHEN commitments IS NULL
      THEN 'hash_version_1' WHEN ${any(members, committed)} THEN 'erase' ELSE 'already_erased' END AS status,
      ${count} AS n FROM events ${sql} ORDER BY "index"`,
    params,
  )
  return rows.map((row) => ({index: Number(row.index), id: row.id, status: row.status, members: row.n}))
}

/** The events the intent covers that still hold a committed value of one of its members. */
async function erasableIndexes(client: pg.PoolClient, intent: ErasureIntent): Promise<number[]> {
  const conditions = erasable(intent.members)
  const {sql, params} =
    intent.ids === undefined
      ? where(
          {
            filter: intent.filter ?? {},
            before_index: intent.before_index ?? 0,
            recorded_before: intent.recorded_before,
          },
          ...conditions,
        )
      : {sql: `WHERE id = ANY($1::text[]) AND ${conditions.join(' AND ')}`, params: [Object.keys(intent.ids)]}
  const {rows} = await client.query<{index: string}>(`SELECT "index" FROM events ${sql} ORDER BY "index"`, params)
  return rows.map((row) => Number(row.index))
}

/** The columns an erasure rewrites, with their types. */
const REWRITTEN = ['input', 'output', 'metadata', 'error', 'salts', 'erased', 'verbatim', 'search'] as const
const POSITIONS = REWRITTEN.map((name) => EVENT_COLUMNS.findIndex(([column]) => column === name))
const TYPES = REWRITTEN.map((_, i) => EVENT_COLUMNS[POSITIONS[i]!]![1])
const UPDATE_ROWS = `UPDATE events SET ${REWRITTEN.map(
  (name, i) => `${name} = u.${name}${TYPES[i] === 'text' ? '' : `::${TYPES[i]}`}`,
).join(', ')}
  FROM unnest($1::bigint[], ${REWRITTEN.map((_, i) => `$${i + 2}::text[]`).join(', ')})
  AS u("index", ${REWRITTEN.join(', ')}) WHERE events."index" = u."index"`

/** One batch: the rows read under lock, erased as eraseMembers says, written back; one transaction. */
async function eraseBatch(client: pg.PoolClient, intent: ErasureIntent, indexes: number[]): Promise<number> {
  await client.query('BEGIN')
  try {
    const {rows} = await client.query<{row: string}>(
      `SELECT ${EVENT_JSON} AS row FROM events WHERE "index" = ANY($1::bigint[]) ORDER BY "index" FOR UPDATE`,
      [indexes],
    )
    const changed: unknown[][] = [[], ...REWRITTEN.map(() => [])]
    let members = 0
    for (const {row} of rows) {
      const event = toEvent(row)
      const wanted = intent.ids === undefined ? intent.members : (intent.ids[event.id] ?? [])
      const erased = eraseMembers(event, wanted, intent.id)
      if (erased === event) continue
      members += Object.keys(erased.erased ?? {}).length - Object.keys(event.erased ?? {}).length
      const columns = eventColumns(erased)
      changed[0]!.push(event.index)
      POSITIONS.forEach((position, i) => changed[i + 1]!.push(columns[position]))
    }
    if (changed[0]!.length > 0) {
      await client.query(UPDATE_ROWS, changed)
      await client.query('SELECT pg_notify($1, $2)', [ERASURE_CHANNEL, intent.id])
    }
    await client.query('COMMIT')
    return members
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}

/** Applies an intent whose event is recorded, batch by batch, then forgets it and vacuums the table. */
export async function applyErasure(
  client: pg.PoolClient,
  intent: ErasureIntent,
): Promise<{events: number; members: number}> {
  const indexes = await erasableIndexes(client, intent)
  let members = 0
  for (let at = 0; at < indexes.length; at += ERASE_BATCH) {
    members += await eraseBatch(client, intent, indexes.slice(at, at + ERASE_BATCH))
  }
  await client.query('DELETE FROM pending_erasures WHERE id = $1', [intent.id])
  // The old row versions (and their TOAST and index entries) are dead from here: freed for reuse now.
  await client.query('VACUUM events')
  return {events: indexes.length, members}
}

export async function addPending(client: pg.PoolClient, intent: ErasureIntent): Promise<void> {
  await client.query('INSERT INTO pending_erasures (id, intent) VALUES ($1, $2)', [intent.id, JSON.stringify(intent)])
}

export async function removePending(client: pg.PoolClient, id: string): Promise<void> {
  await client.query('DELETE FROM pending_erasures WHERE id = $1', [id])
}

/**
 * Completes the erasures left pending by a process that died (this session holds the lock, so no
 * live process is between an intent and its event): applied when their event was recorded, else dropped.
 */
export async function completePending(client: pg.PoolClient): Promise<void> {
  const {rows} = await client.query<{id: string; intent: ErasureIntent; recorded: boolean}>(
    `SELECT id, intent, EXISTS (SELECT 1 FROM events WHERE events.id = pending_erasures.id) AS recorded
     FROM pending_erasures ORDER BY created_at`,
  )
  for (const row of rows) {
    if (row.recorded) await applyErasure(client, row.intent)
    else await removePending(client, row.id)
  }
}

/** Runs `work` holding the log's erasure lock on this session. */
export async function withErasureLock<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('SELECT pg_advisory_lock($1)', [ERASURE_LOCK])
  try {
    return await work()
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [ERASURE_LOCK]).catch(() => undefined)
  }
}

/**
 * How long opening waits for the erasure lock when erasures are pending: a process killed during an
 * erasure holds it until its server session notices, once the statement it ran ends (a batch, or the
 * VACUUM); a live process that holds it longer completes what is pending itself.
 */
const RECOVERY_WAIT = '15s'

/** On opening: completes what a dead process left pending (erasure.ts header). */
export async function recoverErasures(client: pg.PoolClient): Promise<void> {
  const {rows} = await client.query<{n: string}>('SELECT count(*) AS n FROM pending_erasures')
  if (Number(rows[0]!.n) === 0) return
  try {
    await client.query(`SET lock_timeout = '${RECOVERY_WAIT}'`)
    await client.query('SELECT pg_advisory_lock($1)', [ERASURE_LOCK])
  } catch (error) {
    // 55P03 lock_not_available: a live process erases; it completes the pending ones after its own.
    if ((error as {code?: string}).code === '55P03') return
    throw error
  } finally {
    await client.query('RESET lock_timeout')
  }
  try {
    await completePending(client)
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [ERASURE_LOCK]).catch(() => undefined)
  }
}
