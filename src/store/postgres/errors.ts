import {StoreError} from '../errors.js'

/** Errors of the network, not of the input: a PostgreSQL server that cannot be reached now. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

/**
 * A database that cannot be used, in one sentence: `database_unreachable` when its server cannot
 * be reached now (the CLI exits 3), else `database`, a wrong URL or database (exit 2).
 */
export function databaseError(message: string, options?: {cause?: unknown}): StoreError {
  const cause = (options?.cause as {code?: unknown} | undefined)?.code
  return new StoreError(UNREACHABLE.has(String(cause)) ? 'database_unreachable' : 'database', message, options)
}
