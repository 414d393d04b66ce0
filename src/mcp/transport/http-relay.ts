/**
 * The Streamable HTTP relay (docs/mcp.md; MCP "Transports", Streamable HTTP): serves MCP clients at
 * `--listen` and relays each exchange to `--upstream`, bodies and headers as they came (JSON and
 * SSE responses streamed through). Requests are paired per session (`Mcp-Session-Id`, the
 * 2025-11-25 era) or, without a session (the stateless 2026-07-28 era, and `initialize` itself),
 * per exchange: a POST's requests are answered in its own response. Other paths of the upstream's
 * origin (OAuth metadata, for example) are forwarded unobserved.
 */
import http, {type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {sha256Hex} from '../../core/crypto.js'
import {AuditError} from '../../core/errors.js'
import {readBody, relayAnswer} from './http-body.js'
import {closeAgents, sendUpstream, upstreamUrl, writeUpstreamHead} from './http-forward.js'
import {errorResponse, parseFrame, REFUSAL_CODES, type Frame, type JsonRpcId} from '../jsonrpc.js'
import type {OversizedLine} from './line-framer.js'
import type {HeldDecision} from '../gate/holding.js'
import {CallScope, type McpObserver} from '../record/observer.js'
import {routingHeaderMismatch} from './routing-headers.js'
import {McpSession, type ServerIdentity} from '../record/session.js'

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

/** The ids of a frame's requests: the calls a POST's response answers. */
function requestIds(frame: Frame): JsonRpcId[] {
  return 'messages' in frame ? frame.messages.flatMap((m) => (m.kind === 'request' ? [m.id] : [])) : []
}

/**
 * The Streamable HTTP relay, a class as the MCP SDK's transports are: the sessions it pairs calls
 * in are its state, and each kind of request (a POST of messages, anything else) has its method.
 */
export class HttpRelay {
  readonly #options: HttpRelayOptions
  readonly #listen: {host: string; port: number}
  readonly #upstream: URL
  /** The upstream URL's path, where MCP is spoken; other paths are forwarded unobserved. */
  readonly #mcpPath: string
  /** What the server says of itself, learnt once for every session's events. */
  readonly #server: ServerIdentity = {}
  readonly #sessions = new Map<string, CallScope>()
  readonly #http: http.Server
  #url = ''

  constructor(options: HttpRelayOptions) {
    this.#options = options
    this.#listen = parseListen(options.listen)
    this.#upstream = parseUpstream(options.upstream)
    this.#mcpPath = this.#upstream.pathname.replace(/\/+$/, '') || '/'
    this.#http = http.createServer((req, res) => this.#handle(req, res))
  }

  /** Where clients reach the relay, once it listens. */
  get url(): string {
    return this.#url
  }

  get upstream(): string {
    return this.#upstream.toString()
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#http.once('error', reject)
      this.#http.listen(this.#listen.port, this.#listen.host, resolve)
    })
    const address = this.#http.address() as AddressInfo
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
    this.#url = `http://${shown}:${address.port}${this.#mcpPath === '/' ? '' : this.#mcpPath}`
  }

  async close(): Promise<void> {
    this.#http.closeAllConnections()
    await new Promise<void>((resolve) => this.#http.close(() => resolve()))
    closeAgents()
    for (const scope of this.#sessions.values()) this.#options.observer.end(scope, 'the proxy stopped')
    this.#sessions.clear()
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://proxy.invalid').pathname.replace(/\/+$/, '') || '/'
    const mcp = path === this.#mcpPath
    const work = mcp && req.method === 'POST' ? this.#post(req, res) : this.#other(req, res, mcp)
    work.catch((error: unknown) => {
      this.#options.note(`relaying ${req.method} ${path} failed: ${(error as Error).message}`, 'relay')
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
  }

  #newScope(sessionId?: string): CallScope {
    return new CallScope(
      new McpSession({
        agentId: this.#options.agentId,
        transport: 'streamable-http',
        server: this.#server,
        serverFallback: this.#upstream.host,
        sessionId: sessionId === undefined ? undefined : sessionDigest(sessionId),
      }),
    )
  }

  /** Sessions clients never closed are let go, oldest first, past MAX_SESSIONS. */
  #remember(id: string, scope: CallScope): void {
    this.#sessions.set(id, scope)
    if (this.#sessions.size <= MAX_SESSIONS) return
    const [oldest, forgotten] = this.#sessions.entries().next().value as [string, CallScope]
    this.#sessions.delete(oldest)
    this.#options.observer.end(forgotten, 'the session was forgotten (too many sessions open)')
  }

  /** The session's scope (made when the proxy did not see it start), or a new exchange scope. */
  #scopeOf(req: IncomingMessage): {scope: CallScope; exchange: boolean} {
    const id = header(req, 'mcp-session-id')
    if (id === undefined) return {scope: this.#newScope(), exchange: true}
    let scope = this.#sessions.get(id)
    if (!scope) this.#remember(id, (scope = this.#newScope(id)))
    return {scope, exchange: false}
  }

  /** Relays the upstream's answer, observing the JSON-RPC messages of a JSON or SSE body. */
  #relayAnswer(res: ServerResponse, answer: IncomingMessage, scope: CallScope): Promise<void> {
    const {observer, maxMessageBytes} = this.#options
    return relayAnswer(res, answer, {
      maxBytes: maxMessageBytes,
      onMessage: (text) => observer.fromServer(parseFrame(text), scope),
      onOversized: (message) => observer.oversized('server', message, scope, maxMessageBytes, true),
    })
  }

  /** A POST: the client's messages, judged before they go; refused ones are answered here. */
  async #post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const {observer, maxMessageBytes} = this.#options
    const {scope, exchange} = this.#scopeOf(req)
    const body = await readBody(req, maxMessageBytes)
    if ('tooLarge' in body) return this.#refuseTooLarge(res, body.tooLarge, scope)
    const frame = parseFrame(body.bytes.toString('utf8'))
    const routing = {method: header(req, 'mcp-method'), name: header(req, 'mcp-name')}
    const mismatch = this.#options.checkRoutingHeaders ? routingHeaderMismatch(routing, frame) : undefined
    const decision = observer.fromClient(frame, scope, header(req, 'mcp-protocol-version'), mismatch)
    const ids = requestIds(frame)
    const settled = 'held' in decision ? await heldUntilDecided(decision.held, scope, ids, res) : decision
    if (!settled.forward) {
      // A conforming server answers a header mismatch 400 (SEP-2243); a refusal is a JSON-RPC answer.
      if (settled.reply === undefined) res.writeHead(202).end()
      else res.writeHead(mismatch ? 400 : 200, {'content-type': 'application/json'}).end(settled.reply)
      return
    }
    const answer = await this.#sendPost(req, res, body.bytes, scope, ids)
    if (answer === undefined) return
    const sessionId = answer.headers['mcp-session-id']
    if (typeof sessionId === 'string' && exchange && !this.#sessions.has(sessionId)) {
      scope.session.sessionId = sessionDigest(sessionId)
      this.#remember(sessionId, scope)
    }
    await this.#relayAnswer(res, answer, scope)
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

  /**
   * A body past the limit is answered here; a response the client meant for the server cannot be
   * passed on over HTTP (the server's request ends in error in the log and times out there).
   */
  #refuseTooLarge(res: ServerResponse, tooLarge: OversizedLine, scope: CallScope): void {
    const {observer, maxMessageBytes} = this.#options
    const standIn = observer.oversized('client', tooLarge, scope, maxMessageBytes)
    const message = `the request body of ${tooLarge.bytes} bytes is larger than the proxy relays`
    const reply =
      standIn?.to === 'client'
        ? standIn.text
        : JSON.stringify(errorResponse(null, {code: REFUSAL_CODES.tooLarge, message}))
    res.writeHead(413, {'content-type': 'application/json'}).end(reply)
  }

  /** Sends a POST's body on; when the upstream cannot be reached, its requests end here (502). */
  async #sendPost(
    req: IncomingMessage,
    res: ServerResponse,
    bytes: Buffer,
    scope: CallScope,
    ids: readonly JsonRpcId[],
  ): Promise<IncomingMessage | undefined> {
    const aborted = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort()
    })
    try {
      return await sendUpstream(req, upstreamUrl(this.#upstream, req.url ?? '/', true), bytes, aborted.signal)
    } catch (error) {
      const reason = aborted.signal.aborted
        ? 'the client closed the connection'
        : `the upstream cannot be reached: ${(error as Error).message}`
      this.#options.observer.abandon(scope, ids, aborted.signal.aborted ? 'cancelled' : 'unanswered', reason)
      if (!aborted.signal.aborted) this.#options.note(`${reason}`, 'upstream')
      if (!res.headersSent) res.writeHead(502, {'content-type': 'application/json'})
      res.end(ids.length === 1 ? JSON.stringify(errorResponse(ids[0]!, {code: -32603, message: reason})) : undefined)
      return undefined
    }
  }

  /** GET (a session's SSE stream), DELETE (its end), anything else: relayed, observed where MCP. */
  async #other(req: IncomingMessage, res: ServerResponse, mcp: boolean): Promise<void> {
    const aborted = new AbortController()
    res.on('close', () => aborted.abort())
    const {scope} = mcp && req.method !== 'OPTIONS' ? this.#scopeOf(req) : {scope: undefined}
    let answer: IncomingMessage
    try {
      answer = await sendUpstream(req, upstreamUrl(this.#upstream, req.url ?? '/', mcp), undefined, aborted.signal)
    } catch (error) {
      if (!aborted.signal.aborted)
        this.#options.note(`the upstream cannot be reached: ${(error as Error).message}`, 'upstream')
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
    await this.#relayAnswer(res, answer, scope)
    if (req.method === 'DELETE' && id !== undefined && status >= 200 && status < 300) {
      this.#options.observer.end(scope, 'the session was closed')
      this.#sessions.delete(id)
    }
  }
}

/** Starts a relay listening at `options.listen`. */
export async function startHttpRelay(options: HttpRelayOptions): Promise<HttpRelay> {
  const relay = new HttpRelay(options)
  await relay.listen()
  return relay
}
