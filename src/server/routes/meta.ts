/** /healthz and /v1/dashboard/config (CONTRACT.md section 4, Other). */
import Router from '@koa/router'

export interface ServiceFeatures {
  version: string
  auth: boolean
  otlp: boolean
  tsa: 'embedded' | 'external'
}

export function metaRoutes(features: ServiceFeatures): Router {
  const router = new Router()

  router.get('/healthz', (ctx) => {
    ctx.body = {status: 'ok'}
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

  return router
}
