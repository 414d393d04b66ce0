/** POST /v1/erasures (docs/api.md, Erasure): scope `erase`, checked by the auth middleware. */
import Router from '@koa/router'
import type {AuditServices} from '../../services/audit.js'
import {jsonBody, MiB} from '../middleware/json-body.js'

/** 10,000 ids of 36 characters with their JSON punctuation, a filter, a reason: well under 1 MiB. */
const MAX_ERASURE_BYTES = MiB

export function erasureRoutes(services: AuditServices): Router {
  const router = new Router()

  router.post('/v1/erasures', jsonBody(MAX_ERASURE_BYTES), async (ctx) => {
    const result = await services.erasure.erase(ctx.request.body)
    // Nothing left to erase records nothing: the answer says so with 200 and no erasure event.
    ctx.status = result.erasure === null ? 200 : 201
    ctx.body = result
  })

  return router
}
