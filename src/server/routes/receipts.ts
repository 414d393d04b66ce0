/**
 * COSE Receipts of events (docs/api.md, "Receipts and signed statements") and the log key as a COSE
 * Key Set at the SCRAPI well-known location. Receipt errors are the API's JSON errors (docs/api.md, "Errors"); the
 * key set is public, as /tlog/ is (it holds the public key only).
 */
import Router from '@koa/router'
import {AuditError} from '../../core/errors.js'
import {encodeProblem, PROBLEM_MEDIA_TYPE} from '../../core/cose/index.js'
import type {AuditServices} from '../../services/audit.js'
import {agentScopeOfRequest} from '../middleware/auth.js'

export const COSE_MEDIA_TYPE = 'application/cose'
export const SCITT_KEYS_PATH = '/.well-known/scitt-keys'

function treeSizeParam(value: unknown): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d+$/.test(value)) {
    throw new AuditError('validation_error', 'tree_size must be a non-negative integer', {
      details: [{field: 'tree_size', message: 'must be a non-negative integer'}],
    })
  }
  return Number(value)
}

export function receiptRoutes(services: AuditServices): Router {
  const router = new Router()

  router.get('/v1/events/:id/receipt', async (ctx) => {
    // Another agent's event has no receipt for a key bound to agents: 404, as if it did not exist.
    const scope = agentScopeOfRequest(ctx)
    if (scope !== undefined) await services.query.getEvent(ctx.params.id!, scope)
    const issued = await services.receipts.forEvent(ctx.params.id!, treeSizeParam(ctx.query.tree_size))
    ctx.type = COSE_MEDIA_TYPE
    ctx.body = issued.receipt
  })

  router.get(SCITT_KEYS_PATH, async (ctx) => {
    ctx.type = 'application/cbor'
    ctx.body = await services.receipts.keySet()
  })

  // SCRAPI "Individual Transparency Service Key": the kid (a byte string) in base64url.
  router.get(`${SCITT_KEYS_PATH}/:kid`, async (ctx) => {
    const key = await services.receipts.coseKey(ctx.params.kid!)
    if (key) {
      ctx.type = 'application/cbor'
      ctx.body = key
      return
    }
    ctx.status = 404
    ctx.type = PROBLEM_MEDIA_TYPE
    ctx.body = Buffer.from(
      encodeProblem({title: 'No such key', detail: `no key of this log has the kid ${ctx.params.kid}`}),
    )
  })

  return router
}

/** The key set is served without an API key: verifiers fetch it, and it holds a public key only. */
export function isScittKeysPath(normalisedPath: string): boolean {
  return normalisedPath === SCITT_KEYS_PATH || normalisedPath.startsWith(`${SCITT_KEYS_PATH}/`)
}
