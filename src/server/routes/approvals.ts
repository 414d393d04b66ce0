/**
 * The approvals API (docs/oversight.md): held calls and their decisions. The auth middleware asks
 * `approve` for a decision and `write` for the proxy's own requests and closes.
 */
import Router from '@koa/router'
import type {AuditServices} from '../../services/audit.js'
import {jsonBody, MiB} from '../middleware/json-body.js'
import {agentScopeOfRequest, keyNameOf} from '../middleware/auth.js'
import type {QueryParams} from '../../core/query-params.js'

/** A held call carries its arguments, as an event's input may (1 MiB); a decision is a few words. */
const MAX_REQUEST_BYTES = MiB
const MAX_DECISION_BYTES = 16 * 1024

export function approvalRoutes(services: AuditServices): Router {
  const router = new Router()

  router.get('/v1/approvals', async (ctx) => {
    ctx.body = await services.approvals.list(ctx.query as QueryParams, agentScopeOfRequest(ctx))
  })

  router.post('/v1/approvals', jsonBody(MAX_REQUEST_BYTES), async (ctx) => {
    ctx.status = 201
    ctx.body = await services.approvals.request(ctx.request.body, agentScopeOfRequest(ctx))
  })

  router.get('/v1/approvals/:id', async (ctx) => {
    ctx.body = await services.approvals.get(ctx.params.id!, agentScopeOfRequest(ctx))
  })

  router.post('/v1/approvals/:id', jsonBody(MAX_DECISION_BYTES), async (ctx) => {
    ctx.status = 201
    ctx.body = await services.approvals.decide(
      ctx.params.id!,
      ctx.request.body,
      keyNameOf(ctx),
      agentScopeOfRequest(ctx),
    )
  })

  router.post('/v1/approvals/:id/close', jsonBody(MAX_DECISION_BYTES), async (ctx) => {
    ctx.status = 201
    ctx.body = await services.approvals.close(ctx.params.id!, ctx.request.body, agentScopeOfRequest(ctx))
  })

  return router
}
