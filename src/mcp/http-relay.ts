/**
 * The Streamable HTTP relay (CONTRACT 11; MCP "Transports", Streamable HTTP): serves MCP clients at
 * `--listen` and relays each exchange to `--upstream`, bodies and headers as they came (JSON and
 * SSE responses streamed through). Requests are paired per session (`Mcp-Session-Id`, the
 * 2025-11-25 era) or, without a session (the stateless 2026-07-28 era, and `initialize` itself),
 * per exchange: a POST's requests are answered in its own response. Other paths of the upstream's
 * origin (OAuth metadata, for example) are forwarded unobserved.
 */
import http, {type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {sha256Hex} from '../core/crypto.js'
import {AuditError} from '../core/errors.js'
import {closeAgents, sendUpstream, upstreamUrl, writeUpstreamHead} from './http-forward.js'
import {errorResponse, parseFrame, REFUSAL_CODES, type JsonRpcId} from './jsonrpc.js'
import {MemberScanner} from './member-scanner.js'
import type {HeldDecision} from './holding.js'
import {CallScope, type McpObserver} from './observer.js'
import {routingHeaderMismatch} from './routing-headers.js'
import {McpSession, type ServerIdentity} from './session.js'
import {SseReader} from './sse-reader.js'

export interface HttpRelayOptions {
  /** HOST:PORT (`[::1]:3100` for IPv6; port 0: any free port). */
  listen: string
  upstream: string
  agentId?: string
  observer: McpObserver
  maxMessageBytes: number
  /** Refuse a request whose Mcp-Method or Mcp-Name header disagrees with its body (with --policy). */
  checkRoutingHeaders: boolean
  note(line: string, kind?: string): void
}

interface HttpRelay {
  url: string
  upstream: string
  close(): Promise<void>
}

/** Sessions the relay keeps track of at once. */
const MAX_SESSIONS = 10_000

function parseListen(listen: string): {host: string; port: number} {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen)
  const port = Number(match?.[3])
  if (!match || port > 65535)
    throw new AuditError('validation_error', `--listen ${listen}: expected HOST:PORT, for example 127.0.0.1:3100`)
  return {host: match[1] ?? match[2]!, port}
}

function parseUpstream(upstream: string): URL {
  let url: URL | undefined
  try {
    url = new URL(upstream)
  } catch {
    url = undefined
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new AuditError('validation_error', `--upstream ${upstream}: expected an http:// or https:// URL`)
  return url
}

/**
 * The session_id of the events of an HTTP session: a digest of its Mcp-Session-Id, so the record
 * names the session without holding a value that would let a reader join it.
 */
function sessionDigest(sessionId: string): string {
  return sha256Hex(`mcp-session ${sessionId}`).slice(0, 32)
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * A held frame (docs/oversight.md) waits for its decision; a client that closes the connection
 * meanwhile releases its calls as cancelled.
 */
async function heldUntilDecided(
  held: Promise<HeldDecision>,
  scope: CallScope,
  ids: readonly JsonRpcId[],
  res: ServerResponse,
): Promise<HeldDecision> {
  const release = () => {
    if (!res.writableFinished) for (const id of ids) scope.held.get(id)?.abort('cancelled')
  }
  res.on('close', release)
  try {
    return await held
  } finally {
    res.off('close', release)
  }
}

export async function startHttpRelay(options: HttpRelayOptions): Promise<HttpRelay> {
  const {host, port} = parseListen(options.listen)
  const upstream = parseUpstream(options.upstream)
  const mcpPath = upstream.pathname.replace(/\/+$/, '') || '/'
  const {observer, maxMessageBytes, note} = options
  const server: ServerIdentity = {}
  const sessions = new Map<string, CallScope>()

  const newScope = (sessionId?: string) =>
    new CallScope(
      new McpSession({
        agentId: options.agentId,
        transport: 'streamable-http',
        server,
        serverFallback: upstream.host,
        sessionId: sessionId === undefined ? undefined : sessionDigest(sessionId),
      }),
    )
  /** Sessions clients never closed are let go, oldest first, past MAX_SESSIONS. */
  const remember = (id: string, scope: CallScope) => {
    sessions.set(id, scope)
    if (sessions.size <= MAX_SESSIONS) return
    const [oldest, forgotten] = sessions.entries().next().value as [string, CallScope]
    sessions.delete(oldest)
    observer.end(forgotten, 'the session was forgotten (too many sessions open)')
  }
  /** The session's scope (made when the proxy did not see it start), or a new exchange scope. */
  const scopeOf = (req: IncomingMessage): {scope: CallScope; exchange: boolean} => {
    const id = header(req, 'mcp-session-id')
    if (id === undefined) return {scope: newScope(), exchange: true}
    let scope = sessions.get(id)
    if (!scope) remember(id, (scope = newScope(id)))
    return {scope, exchange: false}
  }

  /** Relays the upstream's answer, observing the JSON-RPC messages of a JSON or SSE body. */
  const relayResponse = (res: ServerResponse, answer: IncomingMessage, scope: CallScope): Promise<void> => {
    writeUpstreamHead(res, answer)
    const type = String(answer.headers['content-type'] ?? '')
    const observeText = (text: string) => observer.fromServer(parseFrame(text), scope)
    let observe: ((chunk: Buffer) => void) | undefined
    let finish = () => {}
    if (type.startsWith('text/event-stream')) {
      const reader = new SseReader({
        maxBytes: maxMessageBytes,
        onData: observeText,
        onOversized: (event) => observer.oversized('server', event, scope, maxMessageBytes, true),
      })
      observe = (chunk) => reader.push(chunk)
    } else if (type.startsWith('application/json')) {
      const parts: Buffer[] = []
      let size = 0
      let scanner: MemberScanner | undefined
      observe = (chunk) => {
        size += chunk.length
        if (scanner) return scanner.push(chunk)
        parts.push(chunk)
        if (size <= maxMessageBytes) return
        scanner = new MemberScanner()
        for (const part of parts.splice(0)) scanner.push(part)
      }
      finish = () => {
        if (scanner) observer.oversized('server', {bytes: size, ...scanner.found}, scope, maxMessageBytes, true)
        else if (size > 0) observeText(Buffer.concat(parts).toString('utf8'))
      }
    }
    return new Promise((resolve) => {
      answer.on('data', (chunk: Buffer) => {
        if (!res.write(chunk)) {
          answer.pause()
          res.once('drain', () => answer.resume())
        }
        observe?.(chunk)
      })
      answer.on('end', () => {
        res.end()
        finish()
        resolve()
      })
      answer.on('error', () => {
        res.destroy()
        resolve()
      })
      res.on('close', () => {
        answer.destroy()
        resolve()
      })
    })
  }

  /** A POST: the client's messages, judged before they go; refused ones are answered here. */
  const post = async (req: IncomingMessage, res: ServerResponse) => {
    const {scope, exchange} = scopeOf(req)
    const body = await readBody(req, maxMessageBytes)
    if ('tooLarge' in body) {
      // The body is answered here; a response the client meant for the server cannot be passed on
      // over HTTP (the server's request ends in error in the log and times out there).
      const standIn = observer.oversized('client', body.tooLarge, scope, maxMessageBytes)
      const message = `the request body of ${body.tooLarge.bytes} bytes is larger than the proxy relays`
      const reply =
        standIn?.to === 'client'
          ? standIn.text
          : JSON.stringify(errorResponse(null, {code: REFUSAL_CODES.tooLarge, message}))
      res.writeHead(413, {'content-type': 'application/json'}).end(reply)
      return
    }
    const frame = parseFrame(body.bytes.toString('utf8'))
    const routing = {method: header(req, 'mcp-method'), name: header(req, 'mcp-name')}
    const mismatch = options.checkRoutingHeaders ? routingHeaderMismatch(routing, frame) : undefined
    const decision = observer.fromClient(frame, scope, header(req, 'mcp-protocol-version'), mismatch)
    const ids: JsonRpcId[] =
      'messages' in frame ? frame.messages.flatMap((m) => (m.kind === 'request' ? [m.id] : [])) : []
    const settled = 'held' in decision ? await heldUntilDecided(decision.held, scope, ids, res) : decision
    if (!settled.forward) {
      // A conforming server answers a header mismatch 400 (SEP-2243); a refusal is a JSON-RPC answer.
      if (settled.reply === undefined) res.writeHead(202).end()
      else res.writeHead(mismatch ? 400 : 200, {'content-type': 'application/json'}).end(settled.reply)
      return
    }
    const aborted = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort()
    })
    let answer: IncomingMessage
    try {
      answer = await sendUpstream(req, upstreamUrl(upstream, req.url ?? '/', true), body.bytes, aborted.signal)
    } catch (error) {
      const reason = aborted.signal.aborted
        ? 'the client closed the connection'
        : `the upstream cannot be reached: ${(error as Error).message}`
      observer.abandon(scope, ids, aborted.signal.aborted ? 'cancelled' : 'unanswered', reason)
      if (!aborted.signal.aborted) note(`${reason}`, 'upstream')
      if (!res.headersSent) res.writeHead(502, {'content-type': 'application/json'})
      res.end(ids.length === 1 ? JSON.stringify(errorResponse(ids[0]!, {code: -32603, message: reason})) : undefined)
      return
    }
    const sessionId = answer.headers['mcp-session-id']
    if (typeof sessionId === 'string' && exchange && !sessions.has(sessionId)) {
      scope.session.sessionId = sessionDigest(sessionId)
      remember(sessionId, scope)
    }
    await relayResponse(res, answer, scope)
    if (exchange && scope.session.sessionId === undefined) {
      const cancelled = !res.writableFinished
      observer.abandon(
        scope,
        ids,
        cancelled ? 'cancelled' : 'unanswered',
        cancelled ? 'the client closed the connection' : 'the response ended without it',
      )
    }
  }

  /** GET (a session's SSE stream), DELETE (its end), anything else: relayed, observed where MCP. */
  const other = async (req: IncomingMessage, res: ServerResponse, mcp: boolean) => {
    const aborted = new AbortController()
    res.on('close', () => aborted.abort())
    const {scope} = mcp && req.method !== 'OPTIONS' ? scopeOf(req) : {scope: undefined}
    let answer: IncomingMessage
    try {
      answer = await sendUpstream(req, upstreamUrl(upstream, req.url ?? '/', mcp), undefined, aborted.signal)
    } catch (error) {
      if (!aborted.signal.aborted) note(`the upstream cannot be reached: ${(error as Error).message}`, 'upstream')
      if (!res.headersSent) res.writeHead(502).end()
      return
    }
    if (scope === undefined) {
      writeUpstreamHead(res, answer)
      answer.pipe(res)
      return
    }
    const id = header(req, 'mcp-session-id')
    const status = answer.statusCode ?? 500
    await relayResponse(res, answer, scope)
    if (req.method === 'DELETE' && id !== undefined && status >= 200 && status < 300) {
      observer.end(scope, 'the session was closed')
      sessions.delete(id)
    }
  }

  const httpServer = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://proxy.invalid').pathname.replace(/\/+$/, '') || '/'
    const mcp = path === mcpPath
    const work = mcp && req.method === 'POST' ? post(req, res) : other(req, res, mcp)
    work.catch((error: unknown) => {
      note(`relaying ${req.method} ${path} failed: ${(error as Error).message}`, 'relay')
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject)
    httpServer.listen(port, host, resolve)
  })
  const address = httpServer.address() as AddressInfo
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${shown}:${address.port}${mcpPath === '/' ? '' : mcpPath}`,
    upstream: upstream.toString(),
    async close() {
      httpServer.closeAllConnections()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
      closeAgents()
      for (const scope of sessions.values()) observer.end(scope, 'the proxy stopped')
      sessions.clear()
    },
  }
}

/** A request body up to `max` bytes; past it, only its size and top-level id and method are kept. */
async function readBody(
  req: IncomingMessage,
  max: number,
): Promise<{bytes: Buffer} | {tooLarge: {bytes: number; id?: JsonRpcId | null; method?: string}}> {
  const parts: Buffer[] = []
  let size = 0
  let scanner: MemberScanner | undefined
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (scanner) {
      scanner.push(chunk)
      continue
    }
    parts.push(chunk)
    if (size > max) {
      scanner = new MemberScanner()
      for (const part of parts.splice(0)) scanner.push(part)
    }
  }
  if (scanner) return {tooLarge: {bytes: size, ...scanner.found}}
  return {bytes: Buffer.concat(parts)}
}
