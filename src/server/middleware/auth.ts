/**
 * Bearer authentication with scopes (docs/security.md). Everything needs a key except
 * /healthz and the dashboard's static files; the decision is made on the normalised path, so
 * `//v1/events`, `/V1/EVENTS` or encoded slashes never slip past it.
 */
import type http from 'node:http'
import type {Context, Next} from 'koa'
import {agentScopeOfKey, type AgentScope} from '../../core/auth/agent-scope.js'
import {findKey, type ApiKey, type Scope} from '../../core/auth/keys.js'
import {AuditError} from '../../core/errors.js'

const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/healthz'])

function normalisePath(path: string): string {
  let decoded = path
  try {
    decoded = decodeURIComponent(path)
  } catch {
    // Keep the raw path: a malformed escape cannot name a public path either.
  }
  return decoded.toLowerCase().replace(/\/{2,}/g, '/')
}

/** A person's decision on a held call (docs/oversight.md); the proxy's own requests and closes are `write`. */
const DECISION_PATH = /^\/v1\/approvals\/[^/]+$/
/** Creating and sealing a trail (docs/trails.md). */
const TRAIL_ADMIN_PATH = /^\/v1\/trails(\/[^/]+\/seal)?$/

/**
 * `erase` for POST /v1/erasures; `approve` for deciding a held call; `write` for recording (POST
 * events, batch, traces, timestamp, held calls); `admin` for changing agents' keys (PUT and
 * DELETE, the only methods that do) and for creating and sealing trails; `read` for the rest.
 */
function requiredScope(method: string, path: string): Scope {
  // As for the router, a trailing slash names the same endpoint.
  const endpoint = normalisePath(path).replace(/(.)\/$/, '$1')
  if (['PUT', 'DELETE'].includes(method.toUpperCase())) return 'admin'
  if (method.toUpperCase() !== 'POST' || endpoint === '/v1/policy/check') return 'read'
  if (DECISION_PATH.test(endpoint)) return 'approve'
  if (TRAIL_ADMIN_PATH.test(endpoint)) return 'admin'
  return endpoint === '/v1/erasures' ? 'erase' : 'write'
}

/** An agent's keys (GET): read by `read` keys, and by `admin` keys, which register and revoke them. */
const AGENT_KEYS = /^\/v1\/agents\/[^/]+\/keys\/?$/

function acceptedScopes(method: string, path: string): Scope | readonly Scope[] {
  const scope = requiredScope(method, path)
  return scope === 'read' && method.toUpperCase() === 'GET' && AGENT_KEYS.test(normalisePath(path))
    ? ['read', 'admin']
    : scope
}

export function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '')
  return match?.[1]
}

/**
 * The one Authorization header of a request. Node keeps the first of several and drops the rest;
 * a request with two is refused instead (RFC 9110 section 5.3: the field is not a list; RFC 6750
 * section 3.1: a request with more than one token is invalid_request, 400), so that no proxy and
 * no server disagree about which one counted.
 */
function authorizationHeader(request: http.IncomingMessage): string | undefined {
  let found: string | undefined
  let count = 0
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() !== 'authorization') continue
    count++
    found = request.rawHeaders[i + 1]
  }
  if (count > 1) {
    throw new AuditError('validation_error', 'send one Authorization header, not several (RFC 6750 section 3.1)')
  }
  return found
}

/** The key presented, when it has `scope` (or one of several, any of which will do); otherwise 401 or 403. */
export function authorize(
  keys: readonly ApiKey[],
  presented: string | undefined,
  scope: Scope | readonly Scope[],
): ApiKey {
  if (presented === undefined)
    throw new AuditError('unauthorized', 'an API key is required: send Authorization: Bearer <key>')
  const key = findKey(keys, presented)
  if (!key) throw new AuditError('unauthorized', 'the API key is not valid')
  const accepted: readonly Scope[] = typeof scope === 'string' ? [scope] : scope
  if (!accepted.some((s) => key.scopes.has(s)))
    throw new AuditError('forbidden', `the API key lacks the ${accepted.join(' or ')} scope`)
  return key
}

/** The `name=` of the key a request was authorised with (`ctx.state.keyName`), if any. */
export function keyNameOf(ctx: Context): string | undefined {
  return (ctx.state as {keyName?: string}).keyName
}

/**
 * The agents the request's key is bound to (`agent=`, docs/security.md), set by authMiddleware;
 * undefined for an unbound key or a service without keys: every agent.
 */
export function agentScopeOfRequest(ctx: Context): AgentScope | undefined {
  return (ctx.state as {agentScope?: AgentScope}).agentScope
}

/** The key a request was authorised with (`ctx.state.apiKey`); none without keys or on a public path. */
export function apiKeyOf(ctx: Context): ApiKey | undefined {
  return (ctx.state as {apiKey?: ApiKey}).apiKey
}

export function authMiddleware(keys: readonly ApiKey[], isPublic: (normalisedPath: string, method: string) => boolean) {
  return async function authenticate(ctx: Context, next: Next): Promise<void> {
    const path = normalisePath(ctx.path)
    // The router answers /healthz/ as /healthz: so does this (a probe configured either way).
    if (!PUBLIC_PATHS.has(path.replace(/(.)\/$/, '$1')) && !isPublic(path, ctx.method)) {
      const key = authorize(keys, bearer(authorizationHeader(ctx.req)), acceptedScopes(ctx.method, ctx.path))
      ;(ctx.state as {apiKey?: ApiKey}).apiKey = key
      if (key.name !== undefined) (ctx.state as {keyName?: string}).keyName = key.name
      const scope = agentScopeOfKey(key)
      if (scope !== undefined) (ctx.state as {agentScope?: AgentScope}).agentScope = scope
    }
    await next()
  }
}

/**
 * The WebSocket upgrade: the header, or `?access_token=` (browsers cannot set headers on WebSocket).
 * Gives the key: its trails decide where the stream may go, its agent scope what it carries.
 */
export function authenticateUpgrade(keys: readonly ApiKey[]) {
  return (request: http.IncomingMessage, url: URL): ApiKey =>
    authorize(keys, bearer(authorizationHeader(request)) ?? url.searchParams.get('access_token') ?? undefined, 'read')
}
