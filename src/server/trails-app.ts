/**
 * The application of a service of several trails (docs/api.md, "Trails"). Every request passes
 * one layer before the routes of a log: the trail prefix comes off the path (trail-path.ts), so
 * that authentication decides scopes and public paths on the plain path; then the trail is
 * resolved and checked against the key's `trail=` binding (trail-access.ts), and the routes
 * `trailMiddleware` built for that trail (once, kept while its services are) answer.
 */
import type Koa from 'koa'
import type {AgentDirectory} from '../core/otlp/agents.js'
import type {AuditServices} from '../services/audit.js'
import type {Trails} from '../services/trails.js'
import {baseApp, publicPaths, trailMiddleware, type AnyMiddleware, type AppOptions} from './app.js'
import {apiKeyOf, authMiddleware} from './middleware/auth.js'
import {problemDetails} from './routes/entries.js'
import {trailKeyRoutes} from './routes/trail-keys.js'
import {trailRoutes} from './routes/trails.js'
import {namedTrailOf, resolveTrail, setNamedTrail, setTrail} from './trail-access.js'
import {splitTrailPath} from './trail-path.js'

export interface TrailsAppOptions extends Omit<AppOptions, 'otlpAgents'> {
  /** Each trail's span -> agent memory, shared with the OTLP/gRPC receiver; a fresh one per trail by default. */
  otlpAgentsOf?: (trail: string) => AgentDirectory
}

function stripTrailPrefix(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const {trail, path} = splitTrailPath(ctx.path)
  if (trail !== undefined) {
    setNamedTrail(ctx, trail)
    ctx.path = path
  }
  return next()
}

/** The service's own routes (the trails, every trail's key) answer only unprefixed paths. */
function unprefixed(middleware: AnyMiddleware): Koa.Middleware {
  return (ctx, next) => (namedTrailOf(ctx) === undefined ? middleware(ctx, next) : next())
}

function trailDispatch(trails: Trails, options: TrailsAppOptions): Koa.Middleware {
  const built = new WeakMap<AuditServices, Koa.Middleware>()
  return async (ctx, next) => {
    const {name, services} = await resolveTrail(trails, apiKeyOf(ctx), namedTrailOf(ctx))
    setTrail(ctx, name)
    let routes = built.get(services)
    if (routes === undefined) {
      routes = trailMiddleware(services, {...options, otlpAgents: options.otlpAgentsOf?.(name)})
      built.set(services, routes)
    }
    await routes(ctx, next)
  }
}

export function createTrailsApp(trails: Trails, options: TrailsAppOptions = {}): Koa {
  const app = baseApp(options)
  app.use(stripTrailPrefix)
  // SCRAPI's errors are concise problem details (RFC 9290), also those of authentication.
  app.use(problemDetails())
  if (options.apiKeys) app.use(authMiddleware(options.apiKeys, publicPaths(options)))
  app.use(unprefixed(trailRoutes(trails).routes()))
  app.use(unprefixed(trailKeyRoutes(trails).routes()))
  app.use(trailDispatch(trails, options))
  for (const router of options.extraRouters ?? []) app.use(router.routes())
  return app
}
