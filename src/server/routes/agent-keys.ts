/** Agents' public keys (docs/api.md, Agent keys; docs/signatures.md). PUT and DELETE need the `admin` scope. */
import Router from '@koa/router'
import type {AuditServices} from '../../services/audit.js'
import {checkWritable, inScope} from '../../core/auth/agent-scope.js'
import {AuditError} from '../../core/errors.js'
import {agentScopeOfRequest} from '../middleware/auth.js'
import {jsonBody} from '../middleware/json-body.js'

/** A JWK is a few hundred bytes; a body far larger is no key. */
const MAX_JWK_BYTES = 16 * 1024

export function agentKeyRoutes(services: AuditServices): Router {
  const router = new Router()

  router.get('/v1/agents/:agent_id/keys', async (ctx) => {
    // Another agent is unknown to a key bound to agents (docs/security.md).
    if (!inScope(agentScopeOfRequest(ctx), ctx.params.agent_id!))
      throw new AuditError('not_found', `no agent ${ctx.params.agent_id} for this API key`)
    ctx.body = await services.keys.list(ctx.params.agent_id!)
  })

  router.put('/v1/agents/:agent_id/keys/:kid', jsonBody(MAX_JWK_BYTES), async (ctx) => {
    checkWritable(agentScopeOfRequest(ctx), ctx.params.agent_id!)
    const {status, key, event} = await services.keys.register(ctx.params.agent_id!, ctx.params.kid!, ctx.request.body)
    ctx.status = status
    ctx.body = {key, event}
  })

  router.delete('/v1/agents/:agent_id/keys/:kid', async (ctx) => {
    checkWritable(agentScopeOfRequest(ctx), ctx.params.agent_id!)
    const {status, key, event} = await services.keys.revoke(ctx.params.agent_id!, ctx.params.kid!)
    ctx.status = status
    ctx.body = {key, event}
  })

  return router
}
