/**
 * Bearer authentication with scopes (CONTRACT.md section 6). Everything needs a key except
 * /healthz and the dashboard's static files; the decision is made on the normalised path, so
 * `//v1/events`, `/V1/EVENTS` or encoded slashes never slip past it.
 */
import type http from 'node:http'
import type {Context, Next} from 'koa'
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

/** `write` for recording (POST events, batch, traces, timestamp); `read` for everything else. */
export function requiredScope(method: string, path: string): Scope {
  return method.toUpperCase() === 'POST' && normalisePath(path) !== '/v1/policy/check' ? 'write' : 'read'
}

export function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '')
  return match?.[1]
}

export function authorize(keys: readonly ApiKey[], presented: string | undefined, scope: Scope): void {
  if (presented === undefined) throw new AuditError('unauthorized', 'an API key is required: send Authorization: Bearer <key>')
  const key = findKey(keys, presented)
  if (!key) throw new AuditError('unauthorized', 'the API key is not valid')
  if (!key.scopes.has(scope)) throw new AuditError('forbidden', `the API key lacks the ${scope} scope`)
}

export function authMiddleware(keys: readonly ApiKey[], isPublic: (normalisedPath: string, method: string) => boolean) {
  return async function authenticate(ctx: Context, next: Next): Promise<void> {
    const path = normalisePath(ctx.path)
    // The router answers /healthz/ as /healthz: so does this (a probe configured either way).
    if (!PUBLIC_PATHS.has(path.replace(/(.)\/$/, '$1')) && !isPublic(path, ctx.method)) {
      authorize(keys, bearer(ctx.get('authorization')), requiredScope(ctx.method, ctx.path))
    }
    await next()
  }
}

/** The WebSocket upgrade: the header, or `?access_token=` (browsers cannot set headers on WebSocket). */
export function authenticateUpgrade(keys: readonly ApiKey[]) {
  return (request: http.IncomingMessage, url: URL): void => {
    const header = Array.isArray(request.headers.authorization) ? request.headers.authorization[0] : request.headers.authorization
    authorize(keys, bearer(header) ?? url.searchParams.get('access_token') ?? undefined, 'read')
  }
}
