/**
 * The PostgreSQL store, loaded on first use: `pg` costs every command's start-up a noticeable time,
 * and only `--database-url` needs it.
 */
import type {PostgresStore, PostgresStoreOptions} from './postgres-store.js'

export type {PostgresStore, PostgresStoreOptions} from './postgres-store.js'

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const {openPostgresStore: open} = await import('./postgres-store.js')
  return open(options)
}
