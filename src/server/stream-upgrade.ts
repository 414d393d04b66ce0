/**
 * The upgrade of a request to the WebSocket stream (docs/api.md, Real-time): its path (`/v1/stream`,
 * or `/v1/trails/NAME/stream` for a trail), its key, its query and its trail's services, or the
 * HTTP answer that refuses it.
 */
import type http from 'node:http'
import type {Duplex} from 'node:stream'
import {agentScopeOfKey, type AgentScope} from '../core/auth/agent-scope.js'
import type {ApiKey} from '../core/auth/keys.js'
import {AuditError} from '../core/errors.js'
import {parseStreamQuery, type QueryParams} from '../core/query-params.js'
import type {AuditServices} from '../services/audit.js'
import {splitTrailPath} from './trail-path.js'

/** The request's key; throws AuditError('unauthorized' | 'forbidden') to refuse the upgrade. */
export type StreamAuthenticator = (request: http.IncomingMessage, url: URL) => ApiKey | undefined

/**
 * The services of the trail a stream acts on (`/v1/trails/NAME/stream` names it; `/v1/stream` is
 * the key's or `default`, trail-access.ts); throws AuditError to refuse the upgrade.
 */
export type StreamTrails = (named: string | undefined, key: ApiKey | undefined) => Promise<AuditServices>

/** One log's stream: `/v1/stream` only. */
export function singleLog(services: AuditServices): StreamTrails {
  return async (named) => {
    if (named !== undefined) throw new AuditError('not_found', `no route for /v1/trails/${named}/stream`)
    return services
  }
}

export function refuse(socket: Duplex, status: number, error: AuditError): void {
  const body = JSON.stringify(error.toBody())
  const extra = status === 401 ? 'WWW-Authenticate: Bearer\r\n' : ''
  const reason =
    status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Bad Request'
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}` +
      `Connection: close\r\n\r\n${body}`,
  )
}

/** The query of an upgrade request as QueryParams: a parameter given twice becomes an array. */
function queryParams(url: URL): QueryParams {
  const params: QueryParams = {}
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name)
    params[name] = values.length === 1 ? values[0] : values
  }
  return params
}

/** The query, and the agents of a key bound to agents (docs/security.md): replay and live events stay inside it. */
export type StreamQuery = ReturnType<typeof parseStreamQuery> & {scope?: AgentScope}

export interface Upgrade {
  query: StreamQuery
  services: AuditServices
}

/** The query and the trail's services of an upgrade, or its refusal (unknown path, no access, bad parameters). */
export async function upgradeOf(
  request: http.IncomingMessage,
  authenticate: StreamAuthenticator | undefined,
  trails: StreamTrails,
): Promise<Upgrade | {status: number; refusal: AuditError}> {
  const url = new URL(request.url ?? '/', 'http://localhost')
  const {trail, path} = splitTrailPath(url.pathname)
  // As the REST routes (Koa's router is not strict), a trailing slash names the same endpoint.
  if (path !== '/v1/stream' && path !== '/v1/stream/')
    return {status: 404, refusal: new AuditError('not_found', `no route for ${url.pathname}`)}
  try {
    const key = authenticate?.(request, url)
    const query = {...parseStreamQuery(queryParams(url)), scope: key === undefined ? undefined : agentScopeOfKey(key)}
    return {query, services: await trails(trail, key)}
  } catch (error) {
    if (error instanceof AuditError) return {status: error.status, refusal: error}
    throw error
  }
}
