/** POST /v1/erasures (docs/api.md, Erasure): scope `erase`, checked by the auth middleware. */
import Router from '@koa/router'
import {validationError} from '../../core/errors.js'
import type {AuditServices} from '../../services/audit.js'
import {agentScopeOfRequest, keyNameOf} from '../middleware/auth.js'
import {jsonBody, MiB} from '../middleware/json-body.js'

/** 10,000 ids of 36 characters with their JSON punctuation, a filter, a reason: well under 1 MiB. */
const MAX_ERASURE_BYTES = MiB

/**
 * The body with `requested_by` set to the `name=` of the key that asked (docs/security.md): who
 * asked is the key's label, never a claim of the body that another name could make.
 */
function withRequester(body: unknown, name: string | undefined): unknown {
  if (name === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) return body
  const sent = (body as {requested_by?: unknown}).requested_by
  if (sent !== undefined && sent !== name)
    throw validationError([{field: 'requested_by', message: `must be the key's name ${name}, or absent`}])
  return {...body, requested_by: name}
}

export function erasureRoutes(services: AuditServices): Router {
  const router = new Router()

  router.post('/v1/erasures', jsonBody(MAX_ERASURE_BYTES), async (ctx) => {
    const result = await services.erasure.erase(
      withRequester(ctx.request.body, keyNameOf(ctx)),
      agentScopeOfRequest(ctx),
    )
    // Nothing left to erase records nothing: the answer says so with 200 and no erasure event.
    ctx.status = result.erasure === null ? 200 : 201
    ctx.body = result
  })

  return router
}
