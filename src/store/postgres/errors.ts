import {AuditError} from '../../core/errors.js'

/** Errors of the network, not of the input: a PostgreSQL server that cannot be reached now. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

/**
 * A database that cannot be used, in one sentence: storage_unavailable when its server cannot be
 * reached now (the CLI exits 3), else validation_error, a wrong URL or database (exit 2).
 */
export class DatabaseError extends AuditError {
  constructor(message: string, options?: {cause?: unknown}) {
    const cause = (options?.cause as {code?: unknown} | undefined)?.code
    super(UNREACHABLE.has(String(cause)) ? 'storage_unavailable' : 'validation_error', message, options)
    this.name = 'DatabaseError'
  }
}
