/** /healthz and /v1/dashboard/config (docs/api.md, Other), and GET /v1/stream without an upgrade. */
import Router from '@koa/router'
import {AuditError} from '../../core/errors.js'
import type {StorageUsage} from '../../core/types.js'
import type {HistoryRewrite} from '../../services/signed-history.js'

export interface ServiceFeatures {
  version: string
  auth: boolean
  otlp: boolean
  tsa: 'embedded' | 'external'
  /** How full the store is, where it has an enforced capacity (reported by /healthz). */
  storage?: () => StorageUsage | undefined
}

/**
 * `rewrites`: what the latest signed-history checks found. The process still serves, so /healthz
 * stays 200 (a load balancer must not take every replica of one store out of rotation); the body
 * says `degraded` and why, for an operator's monitoring.
 */
export function metaRoutes(features: ServiceFeatures, rewrites: () => HistoryRewrite[] = () => []): Router {
  const router = new Router()

  router.get('/healthz', (ctx) => {
    const storage = features.storage?.()
    const found = rewrites()
    const body: Record<string, unknown> = {status: found.length === 0 ? 'ok' : 'degraded'}
    if (storage) body.storage = storage
    if (found.length > 0) {
      body.history_rewritten = found.map(({kind, statement, message}) => ({
        kind,
        since: statement.signed_at,
        tree_size: statement.tree_size,
        message,
      }))
    }
    ctx.body = body
  })

  router.get('/v1/dashboard/config', (ctx) => {
    ctx.body = {
      service: 'audit-trail',
      version: features.version,
      features: {
        auth: features.auth,
        otlp: features.otlp,
        timestamps: true,
        tsa: features.tsa,
        stream: true,
        search: true,
        policy: true,
        export: true,
      },
      refresh_interval_ms: 5000,
    }
  })

  // The stream itself is served on the upgrade (stream.ts); a plain GET reaches Koa, and is told
  // how to connect rather than that the route does not exist.
  router.get('/v1/stream', () => {
    throw new AuditError(
      'validation_error',
      'GET /v1/stream is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket)',
    )
  })

  return router
}
