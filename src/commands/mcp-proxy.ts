import path from 'node:path'
import {Flags, type Interfaces} from '@oclif/core'
import {v4 as uuidv4} from 'uuid'
import {AuditCommand, EXIT_USAGE} from '../cli/base.js'
import {parseByteSize} from '../cli/byte-size.js'
import {splitServerCommand} from '../cli/server-command.js'
import {AuditError} from '../core/errors.js'
import {parseDuration} from '../core/policy/index.js'
import {DEFAULT_QUEUE_LIMIT} from '../mcp/record/event-queue.js'
import {startHttpRelay, type HttpRelayOptions} from '../mcp/transport/http-relay.js'
import {serverDestination, storeDestination} from '../mcp/record/log-destination.js'
import {Notes} from '../mcp/notes.js'
import {CallScope} from '../mcp/record/observer.js'
import {PolicyGate} from '../mcp/gate/policy-gate.js'
import {defaultStateDir, openProxyCore, type ProxyCore} from '../mcp/proxy.js'
import {DEFAULT_RECORD_LIMIT, MAX_RECORD_LIMIT} from '../mcp/record/recorded-value.js'
import {cleanText, McpSession} from '../mcp/record/session.js'
import {relayStdio, SpawnError} from '../mcp/transport/stdio-relay.js'

/** The SDK's own stdio limit is 10 MiB; a little more is relayed, so the proxy is never the narrower one. */
const DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024

function byteSize(flag: string, text: string | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (text === undefined) return fallback
  const bytes = parseByteSize(text)
  if (bytes === undefined || bytes < 1 || bytes > max)
    throw new AuditError('validation_error', `--${flag} ${text}: expected a size such as 65536, 64KiB or 16MiB`)
  return bytes
}

function holdTimeout(text: string): number {
  try {
    return parseDuration(text)
  } catch {
    throw new AuditError('validation_error', `--hold-timeout ${text}: expected a duration such as 30s, 5m or 1h`)
  }
}

/**
 * Exactly one way to reach the server: --listen with --upstream (HTTP), or a command after --
 * (stdio); and an --agent-id that can be recorded as given.
 */
function checkInvocation(http: boolean, command: string[], agentId: string | undefined): void {
  if (http === command.length > 0)
    throw new AuditError(
      'validation_error',
      http
        ? 'give either --listen with --upstream or a server command after --, not both'
        : 'give the MCP server command after --, for example: ' +
            'mcp-proxy --server URL -- npx -y @modelcontextprotocol/server-filesystem /srv',
    )
  if (agentId !== undefined && cleanText(agentId, 256) !== agentId)
    throw new AuditError('validation_error', '--agent-id must be 1..256 characters without control characters')
}

type ProxyFlags = Interfaces.InferredFlags<(typeof McpProxy)['flags'] & (typeof McpProxy)['baseFlags']>

export default class McpProxy extends AuditCommand {
  static override description =
    'Stand between an MCP client and an MCP server (stdio or Streamable HTTP) and record every call in the audit trail'

  // stdout is the MCP client's channel: nothing but the server's messages may be written there.
  static override enableJsonFlag = false

  static override examples = [
    '<%= config.bin %> mcp-proxy --server http://127.0.0.1:8080 -- npx -y @modelcontextprotocol/server-filesystem /srv',
    '<%= config.bin %> mcp-proxy --data-dir /var/lib/audit-trail --policy tools.yaml -- mcp-server-everything',
    '<%= config.bin %> mcp-proxy --server http://127.0.0.1:8080 --listen 127.0.0.1:3100 ' +
      '--upstream http://127.0.0.1:3001/mcp',
  ]

  static override usage = ['mcp-proxy [FLAGS] -- COMMAND [ARGS...]', 'mcp-proxy [FLAGS] COMMAND [ARGS...]']

  static override flags = {
    'agent-id': Flags.string({description: "agent_id of every call (default: the client's clientInfo.name)"}),
    policy: Flags.string({
      description: 'policy file (JSON or YAML) whose forbidden_action and allowed_actions rules are enforced',
    }),
    'hold-timeout': Flags.string({
      description: 'how long a call held by a "hold" rule waits for a decision before it is denied (docs/oversight.md)',
      default: '5m',
    }),
    'require-log': Flags.boolean({description: 'refuse calls (JSON-RPC error) while the log cannot record them'}),
    listen: Flags.string({
      description: 'Streamable HTTP: serve MCP clients at HOST:PORT (with --upstream)',
      dependsOn: ['upstream'],
    }),
    upstream: Flags.string({
      description: 'Streamable HTTP: URL of the MCP server endpoint to relay to',
      dependsOn: ['listen'],
    }),
    'state-dir': Flags.string({
      description:
        'where the event queue and the last tool definitions are kept (default: ~/.local/state/audit-trail/mcp)',
      env: 'AUDIT_TRAIL_MCP_STATE_DIR',
    }),
    'queue-limit': Flags.string({
      description: 'most bytes of events waiting on disk for the log; past it calls are refused (default 256MiB)',
    }),
    'record-limit': Flags.string({
      description:
        'arguments and results larger than this are recorded as size and SHA-256 (default 256KiB, at most 400KiB)',
    }),
    'max-message-bytes': Flags.string({
      description: 'largest JSON-RPC message relayed; larger ones are answered with an error (default 16MiB)',
    }),
    'flush-timeout': Flags.integer({
      description: 'seconds to keep sending queued events after the server exits',
      default: 5,
      min: 0,
    }),
  }

  async run(): Promise<void> {
    // The server's command line is taken before parsing, which gets the proxy's own arguments only.
    const {own, command} = splitServerCommand(this.argv, {...this.ctor.baseFlags, ...this.ctor.flags})
    const {flags} = await this.parse(McpProxy, own)
    const http = flags.listen !== undefined
    checkInvocation(http, command, flags['agent-id'])
    const {core, notes, maxMessageBytes, policed} = await this.#setUp(
      flags,
      http ? flags.upstream! : JSON.stringify(command),
    )
    const flushMs = flags['flush-timeout'] * 1000
    const note = (line: string, kind?: string) => notes.say(line, kind)
    const code = await (
      http
        ? this.runHttp(core, {
            listen: flags.listen!,
            upstream: flags.upstream!,
            agentId: flags['agent-id'],
            observer: core.observer,
            maxMessageBytes,
            checkRoutingHeaders: policed,
            note,
          })
        : this.runStdio(core, command, {agentId: flags['agent-id'], maxMessageBytes, note})
    ).catch(async (error: unknown) => {
      await core.close(0)
      throw error
    })
    await core.close(flushMs)
    if (code !== 0) this.exit(code)
  }

  /**
   * Reads the sizes, the policy and the log to record in, in that order (the first mistake is the
   * one said), and opens the proxy's core on them. `relaysTo`: the upstream URL, or the server command as JSON.
   */
  async #setUp(
    flags: ProxyFlags,
    relaysTo: string,
  ): Promise<{core: ProxyCore; notes: Notes; maxMessageBytes: number; policed: boolean}> {
    const maxMessageBytes = byteSize('max-message-bytes', flags['max-message-bytes'], DEFAULT_MAX_MESSAGE)
    const queueLimit = byteSize('queue-limit', flags['queue-limit'], DEFAULT_QUEUE_LIMIT)
    const recordLimit = byteSize('record-limit', flags['record-limit'], DEFAULT_RECORD_LIMIT, MAX_RECORD_LIMIT)
    const server = this.serverOf(flags)
    const notes = new Notes()
    const policy = flags.policy === undefined ? undefined : await this.policyGate(flags.policy, notes)
    const holdTimeoutMs = holdTimeout(flags['hold-timeout'])
    // docs/oversight.md: a data directory is this process's alone, so nobody else could decide.
    if (policy?.holds && !server && flags['database-url'] === undefined)
      throw new AuditError(
        'validation_error',
        'the policy holds calls for approval, which needs a log others can decide on: give --server URL ' +
          '(or --database-url); with --data-dir this proxy owns the directory and nobody could approve',
      )
    const core = await openProxyCore({
      destination: server
        ? serverDestination(server, flags['api-key'], flags.trail)
        : storeDestination(flags['data-dir'], flags['database-url'], flags.trail),
      stateDir: path.resolve(flags['state-dir'] ?? defaultStateDir()),
      policy,
      holdTimeoutMs,
      relaysTo,
      requireLog: flags['require-log'],
      queueLimit,
      recordLimit,
      notes,
    })
    return {core, notes, maxMessageBytes, policed: policy !== undefined}
  }

  private async policyGate(file: string, notes: Notes): Promise<PolicyGate> {
    const gate = await PolicyGate.fromFile(file)
    for (const rule of gate.notEnforced)
      notes.say(`policy rule "${rule.name}" (${rule.type}) is not enforced on calls; check it with: policy check`)
    return gate
  }

  /** Relays until the server exits; its exit code. */
  private async runStdio(
    core: ProxyCore,
    command: string[],
    options: {agentId?: string; maxMessageBytes: number; note(line: string, kind?: string): void},
  ): Promise<number> {
    const session = new McpSession({
      agentId: options.agentId,
      transport: 'stdio',
      server: {},
      serverFallback: path.basename(command[0]!),
      sessionId: uuidv4(),
    })
    const scope = new CallScope(session)
    try {
      return await relayStdio({
        ...options,
        command: command[0]!,
        args: command.slice(1),
        observer: core.observer,
        scope,
      })
    } catch (error) {
      if (!(error instanceof SpawnError)) throw error
      process.stderr.write(`Error: ${error.message}\n`)
      return EXIT_USAGE
    } finally {
      core.observer.end(scope, 'the server exited')
      process.stdin.destroy()
    }
  }

  /** Relays until SIGINT or SIGTERM; exit code 0. */
  private async runHttp(core: ProxyCore, options: HttpRelayOptions): Promise<number> {
    const relay = await startHttpRelay(options)
    options.note(`listening on ${relay.url}, relaying to ${relay.upstream}`)
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve)
      process.once('SIGTERM', resolve)
    })
    await core.release()
    await relay.close()
    return 0
  }
}
