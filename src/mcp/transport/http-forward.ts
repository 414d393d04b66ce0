/**
 * Forwarding one HTTP exchange to the upstream MCP server as it came (RFC 9110 section 7.6.1: the
 * hop-by-hop fields stay behind): every end-to-end header goes on, `Authorization` included, and
 * the upstream's status, headers and body come back unchanged. Only `Accept-Encoding` is dropped,
 * so that the bodies the proxy observes are not compressed.
 */
import http, {type IncomingHttpHeaders, type IncomingMessage, type ServerResponse} from 'node:http'
import https from 'node:https'

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
])

const agents = {
  'http:': new http.Agent({keepAlive: true}),
  'https:': new https.Agent({keepAlive: true}),
}

/** The header fields to send on: end-to-end ones, minus those `Connection` names (RFC 9110 7.6.1). */
function endToEnd(rawHeaders: readonly string[], drop: ReadonlySet<string> = new Set()): string[] {
  const named = new Set<string>()
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.toLowerCase() === 'connection')
      for (const name of rawHeaders[i + 1]!.split(',')) named.add(name.trim().toLowerCase())
  const kept: string[] = []
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase()
    if (HOP_BY_HOP.has(name) || named.has(name) || drop.has(name)) continue
    kept.push(rawHeaders[i]!, rawHeaders[i + 1]!)
  }
  return kept
}

/** The upstream URL for a request to the proxy: the upstream's origin, the request's path and query. */
export function upstreamUrl(upstream: URL, requestUrl: string, mcpPath: boolean): URL {
  const incoming = new URL(requestUrl, 'http://proxy.invalid')
  const target = new URL(upstream)
  if (!mcpPath) target.pathname = incoming.pathname
  target.search = incoming.search || (mcpPath ? upstream.search : '')
  return target
}

/**
 * Sends `req` (its body given, or streamed when undefined) to `target`; resolves with the upstream's
 * response, or rejects when it cannot be reached. `signal` aborts it (the client went away).
 */
export function sendUpstream(
  req: IncomingMessage,
  target: URL,
  body: Buffer | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const client = target.protocol === 'https:' ? https : http
  // Given as raw pairs, headers get no Host from Node: it names the upstream (RFC 9110 7.2).
  const headers = ['Host', target.host]
  headers.push(...endToEnd(req.rawHeaders, new Set(['accept-encoding', ...(body ? ['content-length'] : [])])))
  if (body) headers.push('Content-Length', String(body.length))
  return new Promise((resolve, reject) => {
    const upstream = client.request(target, {
      method: req.method,
      headers: headers as unknown as IncomingHttpHeaders,
      agent: agents[target.protocol as 'http:' | 'https:'],
      signal,
    })
    upstream.on('response', resolve)
    upstream.on('error', reject)
    if (body) upstream.end(body)
    else req.pipe(upstream)
  })
}

/** Starts the client's response with the upstream's status and end-to-end headers. */
export function writeUpstreamHead(res: ServerResponse, upstream: IncomingMessage): void {
  res.writeHead(upstream.statusCode ?? 502, upstream.statusMessage, endToEnd(upstream.rawHeaders))
  res.flushHeaders()
}

export function closeAgents(): void {
  agents['http:'].destroy()
  agents['https:'].destroy()
}
