/**
 * The enforced capacity of the embedded store (docs/design.md): the size of the SQLite
 * database in memory past which appends are refused with 507 storage_full.
 *
 * The ceilings it keeps clear of: sql.js keeps the database file in one JavaScript typed array,
 * which Node limits to 4 GiB and which grows in steps of 12.5 % (a copy each time); a snapshot
 * exports one more copy of the whole database; and the machine must hold both. The default of
 * 2 GiB leaves room for one growth step and an export below the 4 GiB limit (docs/design.md).
 */
import {AuditError} from '../../core/errors.js'
import type {StorageUsage} from '../../core/types.js'

export const DEFAULT_CAPACITY_BYTES = 2 * 1024 ** 3
/** Largest capacity accepted: one growth step (12.5 %) above it stays under the 4 GiB array limit. */
export const MAX_CAPACITY_BYTES = 3.5 * 1024 ** 3
/** Above this fraction of the capacity the store warns (log line, /healthz, stats, dashboard). */
export const WARNING_FRACTION = 0.8
/** Timestamps may still be recorded this far past the capacity, so that a full log can be sealed. */
export const TIMESTAMP_RESERVE_BYTES = 16 * 1024 * 1024
/** Environment variable that sets the capacity (bytes, or with a KiB, MiB or GiB suffix). */
export const CAPACITY_ENV = 'AUDIT_TRAIL_STORE_CAPACITY'

const UNITS: Record<string, number> = {'': 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3}

/** The capacity given (option, then environment), or the default; a bad value is a clear error. */
export function capacityBytes(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  let bytes = option
  const text = env[CAPACITY_ENV]?.trim()
  if (bytes === undefined && text !== undefined && text !== '') {
    const match = /^(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB)?$/.exec(text)
    if (!match) {
      const message = `${CAPACITY_ENV} must be a size in bytes, or with KiB, MiB or GiB (such as 1GiB), not '${text}'`
      throw new AuditError('validation_error', message)
    }
    bytes = Math.floor(Number(match[1]) * UNITS[match[2] ?? '']!)
  }
  bytes ??= DEFAULT_CAPACITY_BYTES
  if (!Number.isSafeInteger(bytes) || bytes <= 0 || bytes > MAX_CAPACITY_BYTES) {
    const message = `the store capacity must be between 1 byte and 3.5 GiB (the embedded store's ceiling), not ${bytes}`
    throw new AuditError('validation_error', message)
  }
  return bytes
}

export function usage(usedBytes: number, capacity: number): StorageUsage {
  const warningBytes = Math.floor(capacity * WARNING_FRACTION)
  const state = usedBytes >= capacity ? 'full' : usedBytes >= warningBytes ? 'warning' : 'ok'
  return {backend: 'embedded', used_bytes: usedBytes, capacity_bytes: capacity, warning_bytes: warningBytes, state}
}

const MIGRATE = 'audit-trail migrate --data-dir DIR --database-url postgres://...'

export function storageFullError(usedBytes: number, capacity: number): AuditError {
  const held = `the embedded store holds ${mib(usedBytes)} of its ${mib(capacity)} capacity`
  const way = `move the data directory to a PostgreSQL server with \`${MIGRATE}\` and serve with --database-url`
  return new AuditError('storage_full', `nothing was recorded: ${held}; ${way}`)
}

export function warningMessage(usedBytes: number, capacity: number): string {
  const percent = Math.round((100 * usedBytes) / capacity)
  const held = `the embedded store holds ${mib(usedBytes)}, ${percent} % of its ${mib(capacity)} capacity`
  return `warning: ${held}; past it events are refused (507 storage_full). Plan a move to PostgreSQL: ${MIGRATE}`
}

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(bytes < 10 * 1024 ** 2 ? 1 : 0)} MiB`
}
