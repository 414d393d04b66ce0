/** Security headers on every response (issue 8): no MIME sniffing, API answers never cached. */
import type {Context, Next} from 'koa'

export async function securityHeaders(ctx: Context, next: Next): Promise<void> {
  try {
    await next()
  } finally {
    ctx.set('X-Content-Type-Options', 'nosniff')
    if (ctx.path.startsWith('/v1/') || ctx.path === '/healthz') ctx.set('Cache-Control', 'no-store')
  }
}
