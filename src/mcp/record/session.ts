/**
 * What the proxy knows of one MCP session, for the events of its calls: who the client is, which
 * server answers and which protocol version they speak. The stateful era (2025-11-25 and earlier)
 * says it once, in `initialize`; the stateless one (2026-07-28) in every request's `_meta`
 * (`io.modelcontextprotocol/clientInfo`, `io.modelcontextprotocol/protocolVersion`) and the
 * server in its `server/discover` result.
 */
import {CONTROL_CHARACTERS} from '../../core/event/text.js'

type McpTransport = 'stdio' | 'streamable-http'

/** The agent of calls whose client names itself nowhere (no `--agent-id`, no clientInfo). */
const UNNAMED_AGENT = 'mcp-client'

const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo'
const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion'
const MAX_LABEL_VALUE = 1024

/** The server as it names itself (initialize or server/discover), shared by every session to it. */
export interface ServerIdentity {
  name?: string
  version?: string
}

/** What an event of a call carries about its session. */
export interface CallContext {
  agentId: string
  sessionId?: string
  labels: Record<string, string>
}

type Info = {name?: unknown; version?: unknown}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

// String.prototype.toWellFormed is ES2024 (Node 20 has it); the project's lib is ES2022.
type WellFormed = {toWellFormed(): string}

/**
 * A name as a one-line string of at most `max` characters, or undefined when nothing is left: the
 * strings of an event have no control characters and no unpaired surrogates (docs/api.md, RFC 8785).
 */
export function cleanText(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined
  const oneLine = (value as unknown as WellFormed).toWellFormed().replace(CONTROL_CHARACTERS, ' ').trim()
  const text = oneLine.length <= max ? oneLine : [...oneLine].slice(0, max).join('')
  return text === '' ? undefined : text
}

/** An agent_id for a client's name (docs/api.md: 1..256 characters; `audit-trail:` is the service's). */
function agentIdOf(name: unknown): string | undefined {
  const text = cleanText(name, 256)
  return text === undefined || text.startsWith('audit-trail:') ? undefined : text
}

interface McpSessionOptions {
  /** `--agent-id`: the agent of every call, whatever the client calls itself. */
  agentId?: string
  transport: McpTransport
  server: ServerIdentity
  /** The server's name until it says its own: the command (stdio) or the upstream host. */
  serverFallback: string
  sessionId?: string
}

export class McpSession {
  readonly #options: McpSessionOptions
  #clientName: string | undefined
  #protocolVersion: string | undefined
  sessionId: string | undefined

  constructor(options: McpSessionOptions) {
    this.#options = options
    this.sessionId = options.sessionId
  }

  get server(): ServerIdentity {
    return this.#options.server
  }

  /** A request the client sent: `initialize` names the client and the version it asks for. */
  learnRequest(method: string, params: unknown): void {
    if (method !== 'initialize') return
    const p = record(params)
    this.#clientName = cleanText(record(p?.clientInfo)?.name, 256) ?? this.#clientName
    if (typeof p?.protocolVersion === 'string') this.#protocolVersion = p.protocolVersion
  }

  /**
   * A result the server sent: `initialize` settles the version; it and `server/discover` name the
   * server. True when the result said something of the session.
   */
  learnResult(method: string, result: unknown): boolean {
    if (method !== 'initialize' && method !== 'server/discover') return false
    const r = record(result)
    const info = record(r?.serverInfo) as Info | undefined
    if (typeof info?.name === 'string') {
      this.#options.server.name = info.name
      this.#options.server.version = typeof info.version === 'string' ? info.version : undefined
    }
    if (method === 'initialize' && typeof r?.protocolVersion === 'string') this.#protocolVersion = r.protocolVersion
    return true
  }

  /**
   * The context of one request: its own `_meta` first (stateless era), then the session's. `header`
   * is the MCP-Protocol-Version of the HTTP request that carried it.
   */
  contextFor(params: unknown, direction: 'client' | 'server', header?: string): CallContext {
    const meta = record(record(params)?._meta)
    const client = cleanText(record(meta?.[META_CLIENT_INFO])?.name, 256) ?? this.#clientName
    const metaVersion = meta?.[META_PROTOCOL_VERSION]
    const version = typeof metaVersion === 'string' ? metaVersion : (header ?? this.#protocolVersion)
    const labels: Record<string, string> = {
      'mcp.server': cleanText(this.server.name, MAX_LABEL_VALUE) ?? this.#options.serverFallback,
      'mcp.transport': this.#options.transport,
      'mcp.direction': direction === 'client' ? 'client_to_server' : 'server_to_client',
    }
    const serverVersion = cleanText(this.server.version, MAX_LABEL_VALUE)
    if (serverVersion !== undefined) labels['mcp.server_version'] = serverVersion
    const protocol = cleanText(version, MAX_LABEL_VALUE)
    if (protocol !== undefined) labels['mcp.protocol_version'] = protocol
    if (client !== undefined) labels['mcp.client'] = cleanText(client, MAX_LABEL_VALUE)!
    const agentId = this.#options.agentId ?? agentIdOf(client) ?? UNNAMED_AGENT
    return this.sessionId === undefined ? {agentId, labels} : {agentId, sessionId: this.sessionId, labels}
  }
}
