/**
 * The PostgreSQL store, loaded on first use: `pg` costs every command's start-up a noticeable time,
 * and only `--database-url` needs it.
 */
import type {PostgresStore, PostgresStoreOptions} from './postgres-store.js'
import type {PostgresTrailCatalog} from './trail-catalog.js'

export {DatabaseError} from './errors.js'
export type {PostgresStore, PostgresStoreOptions} from './postgres-store.js'

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const {openPostgresStore: open} = await import('./postgres-store.js')
  return open(options)
}

export type {PostgresTrailCatalog, TrailRow} from './trail-catalog.js'

/** The trails of the service whose database is `databaseUrl` (docs/trails.md, Storage). */
export async function openPostgresTrailCatalog(databaseUrl: string): Promise<PostgresTrailCatalog> {
  const {PostgresTrailCatalog} = await import('./trail-catalog.js')
  return PostgresTrailCatalog.open(databaseUrl)
}
