/**
 * Before a request reads, what this process holds in memory (the embedded store's Merkle tree)
 * catches up with the store; a database store, which keeps the tree itself, is only asked for its
 * size. Ingest needs no catch-up: the store sequences. A store that cannot be read answers 503
 * storage_unavailable, /healthz included.
 */
import type Koa from 'koa'
import type {AuditServices} from '../../services/audit.js'

const INGEST = new Set(['/v1/events', '/v1/batch', '/v1/traces', '/v1/logs'])

export function refreshBeforeReads(services: AuditServices): Koa.Middleware {
  return async (ctx, next) => {
    if (!(ctx.method === 'POST' && INGEST.has(ctx.path))) await services.refresh()
    await next()
  }
}
