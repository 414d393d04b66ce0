/**
 * Sealing a trail (docs/trails.md, Sealing): `log_state.sealed` and `trail_state.sealed_at`, set
 * under the log's row lock (group-commit.ts). An append either locks that row first and reads the
 * flag, or moves the row on only where it is not sealed; so an append of any process is committed
 * before the seal or refused with trail_sealed, never after it.
 */
import type {Database, Query} from './database.js'
import {LOCK_LOG} from './group-commit.js'
import type {TrailScope} from './trail-scope.js'

/** Seals the trail; false when it was sealed already (nothing changes). */
export function seal(db: Database, scope: TrailScope, at?: string): Promise<boolean> {
  return db.transaction(async (client, _size, head) => {
    if (head.sealed === true) return false
    await client.query(
      `INSERT INTO trail_state (name, sealed_at) VALUES ($1, COALESCE($2::timestamptz, clock_timestamp()))
       ON CONFLICT (only_row) DO UPDATE SET sealed_at = excluded.sealed_at`,
      [scope.name, at ?? null],
    )
    await client.query('UPDATE log_state SET sealed = true')
    return true
  }, LOCK_LOG)
}

export async function isSealed(query: Query): Promise<boolean> {
  const [row] = await query<{sealed: boolean}>(
    'SELECT EXISTS (SELECT FROM trail_state WHERE sealed_at IS NOT NULL) AS sealed',
  )
  return row!.sealed
}
