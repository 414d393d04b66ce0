/** The store module's public face: the sql.js store and what its callers need to know about it. */
export {openSqlJsStore, SqlJsStore, type SqlJsStoreOptions} from './sqljs/sqljs-store.js'
export {StoreLockedError} from './sqljs/lock.js'
export {DataDirError} from './sqljs/data-dir.js'
export {
  DatabaseError,
  openPostgresStore,
  openPostgresTrailCatalog,
  type PostgresStore,
  type PostgresStoreOptions,
  type PostgresTrailCatalog,
  type TrailRow,
} from './postgres/index.js'
export {nodeFileOps, type FileOps} from './sqljs/file-ops.js'
export type {EventStore, ScanOptions} from './store.js'
export {createDirectoryOnce} from './sqljs/staged-directory.js'
export {TrailDirectories} from './sqljs/trail-directories.js'
export type {TrailFile} from './sqljs/trail-file.js'
