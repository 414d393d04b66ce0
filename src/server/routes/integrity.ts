/** Verification and Merkle endpoints (docs/api.md, Integrity). */
import Router from '@koa/router'
import {AuditError} from '../../core/errors.js'
import {parseVerifyQuery} from '../../core/query-params.js'
import type {AuditServices} from '../../services/audit.js'
import {agentScopeOfRequest} from '../middleware/auth.js'

function optionalInteger(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+$/.test(value)) {
    throw new AuditError('validation_error', `${field} must be a non-negative integer`, {
      details: [{field, message: 'must be a non-negative integer'}],
    })
  }
  return Number(value)
}

export function integrityRoutes(services: AuditServices): Router {
  const router = new Router()

  router.get('/v1/verify', async (ctx) => {
    const {agentId} = parseVerifyQuery(ctx.query)
    const scope = agentScopeOfRequest(ctx)
    ctx.body =
      agentId === undefined
        ? await services.integrity.verifyAll(scope)
        : await services.integrity.verifyAgent(agentId, scope)
  })

  router.get('/v1/merkle/root', async (ctx) => {
    ctx.body = await services.integrity.merkleRoot()
  })

  router.get('/v1/merkle/proof/:id', async (ctx) => {
    // Another agent's event has no proof for a key bound to agents: 404, as if it did not exist.
    const scope = agentScopeOfRequest(ctx)
    if (scope !== undefined) await services.query.getEvent(ctx.params.id!, scope)
    ctx.body = await services.integrity.inclusionProof(
      ctx.params.id!,
      optionalInteger(ctx.query.tree_size, 'tree_size'),
    )
  })

  router.get('/v1/merkle/consistency', async (ctx) => {
    const first = optionalInteger(ctx.query.first, 'first')
    if (first === undefined)
      throw new AuditError('validation_error', 'first is required', {
        details: [{field: 'first', message: 'is required'}],
      })
    ctx.body = await services.integrity.consistency(first, optionalInteger(ctx.query.second, 'second'))
  })

  return router
}
