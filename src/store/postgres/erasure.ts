/**
 * Erasure in the PostgreSQL store (docs/erasure.md): its rows in the sequence of erasure-sequence.ts.
 * Every process may erase, one at a time: the
 * erasing session holds an advisory lock from the intent to the VACUUM, which PostgreSQL releases
 * should the process die, and whoever takes the lock next first completes what is pending in
 * `pending_erasures`. A batch of events is one transaction that rewrites each row (the member's
 * column, its salt, `erased`, `verbatim` and the `search` document together), then VACUUM frees the
 * old row versions.
 */
import type pg from 'pg'
import type {ErasureIntent} from '../../core/erasure/index.js'
import {erasureConditions} from '../erasure-rules.js'
import {
  completePending,
  runErasure,
  type ErasedEvent,
  type ErasureDriver,
  type PendingErasure,
} from '../erasure-sequence.js'
import type {PayloadMemberName, StoredEvent} from '../../core/types.js'
import {toEvent} from '../event-row.js'
import type {ErasureCandidate, ErasurePlan, ErasureSelection, ErasureTaken} from '../store.js'
import {inTransaction} from './database.js'
import {EVENT_COLUMNS, EVENT_JSON, eventColumns} from './schema.js'
import {whereOf} from './where.js'
import {lockStatement, type TrailScope} from './trail-scope.js'

/** pg_advisory_lock key of the log's erasures ('atre'). */
const ERASURE_LOCK = 0x61747265
const ERASE_BATCH = 2000

const {committedCount, erasable, status, touched} = erasureConditions({
  serviceEvent: (length, prefix) => `left(agent_id, ${length}) = '${prefix}'`,
  commits: (m) => `coalesce(commitments ? '${m}', false)`,
  erased: (m) => `coalesce(erased ? '${m}', false)`,
})

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

/** Each event a selection matches that holds or held one of `members`. */
export async function erasureCandidates(
  client: pg.PoolClient,
  selection: ErasureSelection,
  members: readonly PayloadMemberName[],
  erasableOnly = false,
): Promise<ErasureCandidate[]> {
  const matched = erasableOnly ? erasable(members) : [touched(members)]
  const {sql, params} = where(selection, ...matched)
  const {rows} = await client.query<{index: string; id: string; status: ErasureCandidate['status']; n: number}>(
    `SELECT "index", id, ${status(members)} AS status, ${committedCount(members)} AS n
      FROM events ${sql} ORDER BY "index"`,
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

/**
 * The PostgreSQL side of the erasure sequence (erasure-sequence.ts) on one session, which holds the
 * log's erasure lock while it runs: no live process is then between an intent and its event.
 */
function postgresErasure(client: pg.PoolClient, scope: TrailScope): ErasureDriver<PendingErasure> {
  return {
    batchSize: ERASE_BATCH,
    exclusive: (work) => withErasureLock(client, scope, work),
    addPending: async (intent) => {
      await client.query('INSERT INTO pending_erasures (id, intent) VALUES ($1, $2)', [
        intent.id,
        JSON.stringify(intent),
      ])
      return {intent}
    },
    removePending: async (id) => {
      await client.query('DELETE FROM pending_erasures WHERE id = $1', [id])
    },
    pendingErasures: async () => {
      const {rows} = await client.query<{intent: ErasureIntent; recorded: boolean}>(
        `SELECT intent, EXISTS (SELECT 1 FROM events WHERE events.id = pending_erasures.id) AS recorded
         FROM pending_erasures ORDER BY created_at`,
      )
      return rows.map((row) => ({pending: {intent: row.intent}, recorded: row.recorded}))
    },
    erasableIndexes: (intent) => erasableIndexes(client, intent),
    rewriteBatch: (intent, indexes, rewrite) => rewriteBatch(client, scope, intent, indexes, rewrite),
    finish: async ({intent}) => {
      await client.query('DELETE FROM pending_erasures WHERE id = $1', [intent.id])
      // The old row versions (and their TOAST and index entries) are dead from here: freed for reuse now.
      await client.query('VACUUM events')
    },
  }
}

/** One batch: the rows read under lock, rewritten, written back and announced; one transaction. */
async function rewriteBatch(
  client: pg.PoolClient,
  scope: TrailScope,
  intent: ErasureIntent,
  indexes: readonly number[],
  rewrite: (events: readonly StoredEvent[]) => ErasedEvent[],
): Promise<void> {
  await inTransaction(client, async () => {
    const {rows} = await client.query<{row: string}>(
      `SELECT ${EVENT_JSON} AS row FROM events WHERE "index" = ANY($1::bigint[]) ORDER BY "index" FOR UPDATE`,
      [indexes],
    )
    const changed: unknown[][] = [[], ...REWRITTEN.map(() => [])]
    for (const {after} of rewrite(rows.map(({row}) => toEvent(row)))) {
      const columns = eventColumns(after)
      changed[0]!.push(after.index)
      POSITIONS.forEach((position, i) => changed[i + 1]!.push(columns[position]))
    }
    if (changed[0]!.length === 0) return
    await client.query(UPDATE_ROWS, changed)
    await client.query('SELECT pg_notify($1, $2)', [scope.channels.erasures, intent.id])
  })
}

/** Runs `work` holding the log's erasure lock (the trail's: trail-scope.ts) on this session. */
async function withErasureLock<T>(client: pg.PoolClient, scope: TrailScope, work: () => Promise<T>): Promise<T> {
  const key = scope.lockKey(ERASURE_LOCK)
  await client.query(lockStatement('pg_advisory_lock', key), key)
  try {
    return await work()
  } finally {
    await client.query(lockStatement('pg_advisory_unlock', key), key).catch(() => undefined)
  }
}

/** One erasure under the log's erasure lock (EventStore.erase; erasure-sequence.ts). */
export function erase(
  client: pg.PoolClient,
  scope: TrailScope,
  plan: () => Promise<ErasurePlan | undefined>,
): Promise<ErasureTaken | undefined> {
  return runErasure(postgresErasure(client, scope), plan)
}

/**
 * How long opening waits for the erasure lock when erasures are pending: a process killed during an
 * erasure holds it until its server session notices, once the statement it ran ends (a batch, or the
 * VACUUM); a live process that holds it longer completes what is pending itself.
 */
const RECOVERY_WAIT = '15s'

/** On opening: completes what a dead process left pending (erasure.ts header). */
export async function recoverErasures(client: pg.PoolClient, scope: TrailScope): Promise<void> {
  const key = scope.lockKey(ERASURE_LOCK)
  const {rows} = await client.query<{n: string}>('SELECT count(*) AS n FROM pending_erasures')
  if (Number(rows[0]!.n) === 0) return
  try {
    await client.query(`SET lock_timeout = '${RECOVERY_WAIT}'`)
    await client.query(lockStatement('pg_advisory_lock', key), key)
  } catch (error) {
    // 55P03 lock_not_available: a live process erases; it completes the pending ones after its own.
    if ((error as {code?: string}).code === '55P03') return
    throw error
  } finally {
    await client.query('RESET lock_timeout')
  }
  try {
    await completePending(postgresErasure(client, scope))
  } finally {
    await client.query(lockStatement('pg_advisory_unlock', key), key).catch(() => undefined)
  }
}
