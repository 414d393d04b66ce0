/**
 * What stops a store from opening (docs/design.md, Errors): one error class for both stores, its
 * `reason` a closed set. It is an AuditError too, so that the edges map it once: its `code` is the
 * API's, which the HTTP status and the CLI's exit code follow.
 */
import {AuditError, type ErrorCode} from '../core/errors.js'

export type StoreErrorReason =
  /** Another process owns the data directory: the store cannot be used now (exit 3). */
  | 'locked'
  /** A data directory that cannot be used as given (exit 2). */
  | 'data_dir'
  /** A PostgreSQL server that cannot be reached now (exit 3). */
  | 'database_unreachable'
  /** A URL that is not PostgreSQL's, a database that cannot be used or holds a newer schema (exit 2). */
  | 'database'

const API_CODES: Readonly<Record<StoreErrorReason, ErrorCode>> = {
  locked: 'storage_unavailable',
  data_dir: 'validation_error',
  database_unreachable: 'storage_unavailable',
  database: 'validation_error',
}

/** Who holds a data directory's lock (`host` when this host cannot check the owner); pid 0: unreadable. */
export interface LockHolder {
  pid: number
  dataDir: string
  host?: string
}

export class StoreError extends AuditError {
  override name = 'StoreError'
  readonly reason: StoreErrorReason
  /** For `locked`: the lock's owner. */
  readonly lock?: LockHolder

  constructor(reason: StoreErrorReason, message: string, options: {cause?: unknown; lock?: LockHolder} = {}) {
    super(API_CODES[reason], message, {cause: options.cause})
    this.reason = reason
    if (options.lock) this.lock = options.lock
  }
}
