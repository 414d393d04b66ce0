/** The store module's public face: the sql.js store and what its callers need to know about it. */
export {openSqlJsStore, SqlJsStore, type SqlJsStoreOptions} from './sqljs-store.js'
export {StoreLockedError} from './lock.js'
export {DataDirError} from './data-dir.js'
export {DatabaseError, openPostgresStore, type PostgresStore, type PostgresStoreOptions} from './postgres/index.js'
export {nodeFileOps, type FileOps} from './file-ops.js'
export type {EventStore, ScanOptions, SearchQuery} from './store.js'
export {createDirectoryOnce} from './staged-directory.js'
