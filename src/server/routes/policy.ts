/** POST /v1/policy/check (docs/api.md, Policy). */
import Router from '@koa/router'
import type {AuditServices} from '../../services/audit.js'
import {agentScopeOfRequest} from '../middleware/auth.js'
import {jsonBody, MiB} from '../middleware/json-body.js'

export function policyRoutes(services: AuditServices): Router {
  const router = new Router()
  router.post('/v1/policy/check', jsonBody(1 * MiB, {optional: true}), async (ctx) => {
    ctx.body = await services.policy.checkRequest(ctx.request.body, agentScopeOfRequest(ctx))
  })
  return router
}
