/** Ingest and query endpoints (docs/api.md, Ingest and Query). */
import Router from '@koa/router'
import type {AuditError} from '../../core/errors.js'
import type {AuditServices} from '../../services/audit.js'
import {MAX_BATCH_BYTES, MAX_EVENT_BYTES} from '../../services/ingest.js'
import {agentScopeOfRequest} from '../middleware/auth.js'
import {jsonBody} from '../middleware/json-body.js'

export function eventRoutes(services: AuditServices): Router {
  const router = new Router()

  router.post('/v1/events', jsonBody(MAX_EVENT_BYTES), async (ctx) => {
    const {status, event} = await services.ingest.recordOne(ctx.request.body, agentScopeOfRequest(ctx))
    ctx.status = status
    ctx.body = event
  })

  router.post('/v1/batch', jsonBody(MAX_BATCH_BYTES, {elements: true}), async (ctx) => {
    // An element is held to the 1 MiB of a single event (as JSON text), checked only in a body larger than that.
    const checkElements = (ctx.state.bodyBytes as number) > MAX_EVENT_BYTES
    const maxElementBytes = checkElements ? MAX_EVENT_BYTES : undefined
    const refused = ctx.state.refusedElements as Map<number, AuditError> | undefined
    const scope = agentScopeOfRequest(ctx)
    const {status, results} = await services.ingest.recordBatch(ctx.request.body, {maxElementBytes, refused, scope})
    ctx.status = status
    ctx.body = results
  })

  router.get('/v1/events', async (ctx) => {
    const {total, body} = await services.query.listEventsJson(ctx.query, agentScopeOfRequest(ctx))
    ctx.set('X-Total-Count', String(total))
    ctx.type = 'application/json'
    ctx.body = body
  })

  router.get('/v1/events/:id', async (ctx) => {
    ctx.body = await services.query.getEvent(ctx.params.id!, agentScopeOfRequest(ctx))
  })

  router.get('/v1/search', async (ctx) => {
    ctx.body = await services.query.search(ctx.query, agentScopeOfRequest(ctx))
  })

  router.get('/v1/agents', async (ctx) => {
    ctx.body = await services.query.agents(agentScopeOfRequest(ctx))
  })

  router.get('/v1/stats', async (ctx) => {
    ctx.body = await services.query.stats(new Date(), agentScopeOfRequest(ctx))
  })

  return router
}
