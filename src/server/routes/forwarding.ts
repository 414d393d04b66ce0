/**
 * GET /v1/forwarding (scope `read`): each destination's position, lag and last error
 * (docs/forwarding.md). `/v1/trails/NAME/forwarding` shows trail NAME only; the unprefixed path
 * every trail the key opens, destinations being the service's, not a trail's.
 */
import Router from '@koa/router'
import type {DestinationStatus} from '../../services/forwarding/index.js'
import {apiKeyOf} from '../middleware/auth.js'
import {namedTrailOf, trailOf} from '../trail-access.js'

export function forwardingRoutes(status: (trails?: readonly string[]) => Promise<DestinationStatus[]>): Router {
  const router = new Router()
  router.get('/v1/forwarding', async (ctx) => {
    const trails = namedTrailOf(ctx) === undefined ? apiKeyOf(ctx)?.trails : [trailOf(ctx)]
    ctx.body = {destinations: await status(trails)}
  })
  return router
}
