/** Timestamping endpoints (docs/api.md, Timestamping). */
import Router from '@koa/router'
import type {AuditServices} from '../../services/audit.js'
import {jsonBody} from '../middleware/json-body.js'

export function timestampRoutes(services: AuditServices): Router {
  const router = new Router()

  router.post('/v1/timestamp', async (ctx) => {
    const record = await services.timestamps.issue()
    ctx.status = 201
    ctx.body = record
  })

  // `timestamps reset`: start signed history over after a restore, with the reason on record.
  router.post('/v1/timestamps/reset', jsonBody(64 * 1024), async (ctx) => {
    const body = ctx.request.body as {reason?: unknown} | null
    const record = await services.timestamps.reset(typeof body === 'object' && body !== null ? body.reason : undefined)
    ctx.status = 201
    ctx.body = record
  })

  router.get('/v1/timestamps', async (ctx) => {
    ctx.body = await services.timestamps.list()
  })

  router.get('/v1/timestamps/verify', async (ctx) => {
    ctx.body = await services.timestamps.verifyLatest()
  })

  router.get('/v1/timestamps/ca', async (ctx) => {
    ctx.type = 'application/x-pem-file'
    ctx.body = (await services.timestamps.trustAnchorsPem()).join('')
  })

  return router
}
