/**
 * The Koa application, built by a function so that tests drive `app.callback()` without a port;
 * `listen` happens in server.ts. `createApp` serves one log; `createTrailsApp` (trails-app.ts)
 * serves every trail of a service, each through the routes `trailMiddleware` builds for it.
 */
import type Router from '@koa/router'
import Koa from 'koa'
import type {ApiKey} from '../core/auth/keys.js'
import {AgentDirectory} from '../core/otlp/agents.js'
import type {AuditServices} from '../services/audit.js'
import {authMiddleware} from './middleware/auth.js'
import {agentKeyRoutes} from './routes/agent-keys.js'
import {approvalRoutes} from './routes/approvals.js'
import {errorMiddleware, logToStderr, type ErrorLogger} from './middleware/errors.js'
import {securityHeaders} from './middleware/headers.js'
import {erasureRoutes} from './routes/erasures.js'
import {eventRoutes} from './routes/events.js'
import {integrityRoutes} from './routes/integrity.js'
import {metaRoutes, type ServiceFeatures} from './routes/meta.js'
import {policyRoutes} from './routes/policy.js'
import {otlpDisabledRoutes} from './routes/otlp.js'
import {logRoutes} from './routes/otlp-logs.js'
import {traceRoutes} from './routes/otlp-traces.js'
import {exportRoutes} from './routes/export.js'
import {timestampRoutes} from './routes/timestamps.js'
import {refreshBeforeReads} from './middleware/refresh.js'
import {isTlogPath, tlogRoutes} from './routes/tlog.js'
import {isScittKeysPath, receiptRoutes} from './routes/receipts.js'
import {entryRoutes, problemDetails} from './routes/entries.js'
import type {AgentKeyLookup} from '../core/cose/index.js'

export interface AppOptions {
  /** With keys, every endpoint but /healthz (and the dashboard's static files) needs a Bearer key. */
  apiKeys?: readonly ApiKey[]
  features?: Partial<ServiceFeatures>
  logError?: ErrorLogger
  /** Mount POST /v1/traces and /v1/logs (`serve --otlp`); without it the paths answer 404. */
  otlp?: boolean
  /** The span -> agent memory the OTLP receivers share (HTTP and gRPC); a fresh one by default. */
  otlpAgents?: AgentDirectory
  /** Extra routers (the OTLP receiver, the dashboard), mounted after the core routes. */
  extraRouters?: Router[]
  /** Paths served without a key (the dashboard's static files). */
  isPublic?: (normalisedPath: string, method: string) => boolean
  /** The agent keys (docs/api.md, Agent keys) POST /entries checks statements against; none: every kid is unknown. */
  agentKeys?: AgentKeyLookup
}

export const VERSION = '0.1.0'

/** A middleware whatever the context it adds to (a router's adds its params). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyMiddleware = Koa.Middleware<any, any>

/** Runs the middleware in order, then `next`: one trail's routes as one middleware. */
export function compose(middleware: readonly AnyMiddleware[]): Koa.Middleware {
  return (ctx, next) => {
    const run = async (i: number): Promise<void> => {
      if (i === middleware.length) return next()
      await middleware[i]!(ctx, () => run(i + 1))
    }
    return run(0)
  }
}

/** Security headers and the one error middleware, which every request passes first. */
export function baseApp(options: Pick<AppOptions, 'logError'>): Koa {
  const app = new Koa()
  app.silent = true
  app.use(securityHeaders)
  app.use(errorMiddleware(options.logError ?? logToStderr))
  return app
}

/** Paths served without a key: /tlog/ (C2SP tiles and checkpoint) and the SCITT keys (docs/security.md). */
export function publicPaths(options: Pick<AppOptions, 'isPublic'>): (path: string, method: string) => boolean {
  const isPublic = options.isPublic ?? (() => false)
  return (path, method) => isTlogPath(path) || isScittKeysPath(path) || isPublic(path, method)
}

/** Every route of one log, after the catch-up of its tree (refresh.ts). */
export function trailMiddleware(services: AuditServices, options: Omit<AppOptions, 'extraRouters'>): Koa.Middleware {
  const features: ServiceFeatures = {
    version: VERSION,
    auth: options.apiKeys !== undefined,
    otlp: options.otlp ?? false,
    tsa: services.timestamps.kind,
    ...options.features,
  }
  features.storage ??= () => services.store.storage?.()
  const routers = [
    metaRoutes(features, () => services.history.rewrites()),
    eventRoutes(services),
    integrityRoutes(services),
    timestampRoutes(services),
    exportRoutes(services),
    erasureRoutes(services),
    policyRoutes(services),
    tlogRoutes(services),
    receiptRoutes(services),
    entryRoutes(
      services,
      options.agentKeys ?? (async (kid) => (await services.keys.current(), services.keys.keyOwner(kid))),
    ),
    agentKeyRoutes(services),
    approvalRoutes(services),
  ]
  if (options.otlp) {
    const agents = options.otlpAgents ?? new AgentDirectory()
    routers.push(traceRoutes(services, agents), logRoutes(services, agents))
  } else {
    routers.push(otlpDisabledRoutes())
  }
  return compose([refreshBeforeReads(services), ...routers.map((router) => router.routes())])
}

/** The application of one log. */
export function createApp(services: AuditServices, options: AppOptions = {}): Koa {
  const app = baseApp(options)
  // SCRAPI's errors are concise problem details (RFC 9290), also those of authentication.
  app.use(problemDetails())
  if (options.apiKeys) app.use(authMiddleware(options.apiKeys, publicPaths(options)))
  app.use(trailMiddleware(services, options))
  for (const router of options.extraRouters ?? []) app.use(router.routes())
  return app
}
