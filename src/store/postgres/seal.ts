/**
 * Sealing a trail (docs/trails.md, Sealing): `trail_state.sealed_at`, set under the log's row lock
 * (group-commit.ts), which every append reads after taking that lock. So an append of any process
 * is either committed before the seal or refused with trail_sealed, never after it.
 */
import type {Database, Query} from './database.js'
import {LOCK_LOG} from './group-commit.js'
import type {TrailScope} from './trail-scope.js'

/** Seals the trail; false when it was sealed already (nothing changes). */
export function seal(db: Database, scope: TrailScope): Promise<boolean> {
  return db.transaction(async (client, _size, head) => {
    if (head.sealed === true) return false
    await client.query(
      `INSERT INTO trail_state (name, sealed_at) VALUES ($1, clock_timestamp())
       ON CONFLICT (only_row) DO UPDATE SET sealed_at = excluded.sealed_at`,
      [scope.name],
    )
    return true
  }, LOCK_LOG)
}

export async function isSealed(query: Query): Promise<boolean> {
  const [row] = await query<{sealed: boolean}>(
    'SELECT EXISTS (SELECT FROM trail_state WHERE sealed_at IS NOT NULL) AS sealed',
  )
  return row!.sealed
}
