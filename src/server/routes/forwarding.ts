/** GET /v1/forwarding (scope `read`): each destination's position, lag and last error (docs/forwarding.md). */
import Router from '@koa/router'
import type {DestinationStatus} from '../../services/forwarding/index.js'

export function forwardingRoutes(status: () => Promise<DestinationStatus[]>): Router {
  const router = new Router()
  router.get('/v1/forwarding', async (ctx) => {
    ctx.body = {destinations: await status()}
  })
  return router
}
