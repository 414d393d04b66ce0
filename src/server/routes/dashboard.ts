/**
 * The dashboard's static files (issue 9): a fixed allow-list served from the package's `public/`
 * folder, so no request path ever reaches the file system. They are public even when auth is on;
 * the data behind them is not (every /v1 request the page makes carries the key).
 */
import {readFile} from 'node:fs/promises'
import {fileURLToPath} from 'node:url'
import Router from '@koa/router'
import type {Context} from 'koa'
import {sha256Hex} from '../../core/crypto.js'

/** src/server/routes/ under tsx and dist/server/routes/ when built: both are three levels below the package root. */
const PUBLIC_DIR = new URL('../../../public/', import.meta.url)

const JS = 'text/javascript; charset=utf-8'

/** Request path -> [file in public/, content type]. Lower-case: the auth check sees lower-cased paths. */
const FILES: ReadonlyMap<string, readonly [string, string]> = new Map([
  ['/', ['index.html', 'text/html; charset=utf-8']],
  ['/index.html', ['index.html', 'text/html; charset=utf-8']],
  ['/style.css', ['style.css', 'text/css; charset=utf-8']],
  ['/favicon.svg', ['favicon.svg', 'image/svg+xml']],
  ['/app.js', ['app.js', JS]],
  ['/api.js', ['api.js', JS]],
  ['/dom.js', ['dom.js', JS]],
  ['/overview.js', ['overview.js', JS]],
  ['/agents.js', ['agents.js', JS]],
  ['/events.js', ['events.js', JS]],
  ['/event-detail.js', ['event-detail.js', JS]],
  ['/merkle.js', ['merkle.js', JS]],
  ['/live.js', ['live.js', JS]],
  ['/policy.js', ['policy.js', JS]],
  ['/run.js', ['run.js', JS]],
  ['/approvals.js', ['approvals.js', JS]],
])

/**
 * Scripts, styles and connections only from this origin ('self' covers ws:/wss: to it, CSP Level 3
 * section 6.7.2.8); no inline script, so injected markup could not run even if it got in.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

interface StaticFile {
  body: Buffer
  etag: string
}

/** GET and HEAD of the allow-listed paths only; everything else still needs a key. */
export function isDashboardPath(normalisedPath: string, method: string): boolean {
  const verb = method.toUpperCase()
  return (verb === 'GET' || verb === 'HEAD') && FILES.has(normalisedPath)
}

export function dashboardRoutes(): Router {
  const router = new Router()
  // Read once per process: the files ship with the package and do not change under it.
  const cache = new Map<string, Promise<StaticFile>>()
  const load = (file: string): Promise<StaticFile> => {
    let loaded = cache.get(file)
    if (!loaded) {
      loaded = readFile(fileURLToPath(new URL(file, PUBLIC_DIR))).then((body) => ({
        body,
        etag: `"${sha256Hex(body).slice(0, 32)}"`,
      }))
      loaded.catch(() => cache.delete(file))
      cache.set(file, loaded)
    }
    return loaded
  }

  for (const [path, [file, type]] of FILES) {
    router.get(path, async (ctx: Context) => {
      const {body, etag} = await load(file)
      ctx.set('Cache-Control', 'no-cache')
      ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      ctx.set('Referrer-Policy', 'no-referrer')
      ctx.set('ETag', etag)
      ctx.type = type
      ctx.status = 200
      if (ctx.fresh) {
        ctx.status = 304
        return
      }
      ctx.body = body
    })
  }
  return router
}
