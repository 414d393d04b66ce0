/**
 * C2SP tlog-tiles v1.0.0 read API under /tlog/ (checkpoint, hash tiles, entry bundles) and
 * GET /v1/log/key. Tiles are immutable, so they are cached for a year; the checkpoint for a few
 * seconds at most (tlog-tiles, "Checkpoints").
 */
import Router from '@koa/router'
import {AuditError} from '../../core/errors.js'
import {parseTilePath} from '../../core/tiles/index.js'
import type {AuditServices} from '../../services/audit.js'
import {readTile} from '../../services/tiles.js'

export function tlogRoutes(services: AuditServices): Router {
  const router = new Router()

  router.get('/v1/log/key', async (ctx) => {
    const identity = await services.checkpoints.identity()
    ctx.body = {origin: identity.origin, verifier_key: identity.verifierKey}
  })

  router.get('/tlog/checkpoint', async (ctx) => {
    ctx.type = 'text/plain; charset=utf-8'
    ctx.set('Cache-Control', 'public, max-age=2')
    ctx.body = await services.checkpoints.servedNote()
  })

  router.get('/tlog/tile/*rest', async (ctx) => {
    const address = parseTilePath(ctx.path.slice('/tlog/tile/'.length))
    if (!address)
      throw new AuditError(
        'not_found',
        `no tile at ${ctx.path} (C2SP tlog-tiles paths: /tlog/tile/<L>/<N>[.p/<W>], /tlog/tile/entries/<N>[.p/<W>])`,
      )
    const tile = await readTile(services, address)
    if (!tile)
      throw new AuditError(
        'not_found',
        `the tree of ${await services.tree.size()} leaves has no tile ${ctx.path.slice('/tlog/'.length)}`,
      )
    ctx.type = 'application/octet-stream'
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable')
    ctx.body = tile
  })

  return router
}

/** /tlog/ is served without an API key: witnesses and monitors fetch it, and it holds hashes only. */
export function isTlogPath(normalisedPath: string): boolean {
  return normalisedPath.startsWith('/tlog/')
}
