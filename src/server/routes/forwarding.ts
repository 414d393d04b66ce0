/**
 * GET /v1/forwarding (scope `read`): each destination's position, lag and last error
 * (docs/forwarding.md). `/v1/trails/NAME/forwarding` shows trail NAME only; the unprefixed path
 * every trail the key opens, destinations being the service's, not a trail's.
 */
import Router from '@koa/router'
import type {DestinationStatus} from '../../services/forwarding/index.js'
import {agentScopeOfRequest, apiKeyOf} from '../middleware/auth.js'
import {namedTrailOf, trailOf} from '../trail-access.js'

/** Said in place of what a key bound to agents is not shown. */
const WITHHELD = 'withheld from an API key bound to agents'

/**
 * A destination as a key bound to agents sees it (docs/security.md): positions and lag are
 * tree-level counts, shown; the forward filter may name other agents and an error text may quote
 * their events, so both are withheld (the error's time stays).
 */
function forBoundKey(status: DestinationStatus): DestinationStatus {
  return {
    ...status,
    filter: status.filter === null ? null : WITHHELD,
    last_error: status.last_error === null ? null : {message: WITHHELD, at: status.last_error.at},
  }
}

export function forwardingRoutes(status: (trails?: readonly string[]) => Promise<DestinationStatus[]>): Router {
  const router = new Router()
  router.get('/v1/forwarding', async (ctx) => {
    const trails = namedTrailOf(ctx) === undefined ? apiKeyOf(ctx)?.trails : [trailOf(ctx)]
    const destinations = await status(trails)
    ctx.body = {destinations: agentScopeOfRequest(ctx) === undefined ? destinations : destinations.map(forBoundKey)}
  })
  return router
}
