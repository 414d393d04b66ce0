import {Flags} from '@oclif/core'
import WebSocket from 'ws'
import {onTrail, parseServerUrl} from '../cli/server-url.js'
import {
  apiKeyFlag,
  EXIT_UNAVAILABLE,
  EXIT_USAGE,
  exitCodeOf,
  JsonCommand,
  serverFlagOptions,
  trailFlag,
} from '../cli/base.js'
import {errorCode} from '../cli/client.js'
import {errorSentence} from '../cli/next-step.js'
import {colour, withApiKeyHint} from '../cli/output.js'
import {AuditError} from '../core/errors.js'
import type {StoredEvent} from '../core/types.js'

type StreamMessage = {
  type: string
  event?: StoredEvent
  tree_size?: number
  merkle_root?: string
  timestamp?: {timestamp: string; tree_size: number; tsa: string}
}

/** The stream's ws:// or wss:// URL on the server of --server (an input error when that is no http(s) URL). */
function streamUrl(server: string, trail: string | undefined): URL {
  return new URL(`${parseServerUrl(server).replace(/^http/, 'ws')}${onTrail('/v1/stream', trail)}`)
}

/** A close of the stream: by the server (exit 0) or a lost connection (README.md, "Exit codes": 3). */
function closed(closeCode: number, reason: string): {exitCode: number; line: string} {
  const why = `${closeCode}${reason.length > 0 ? ` ${reason}` : ''}`
  if (closeCode === 1000 || closeCode === 1001) return {exitCode: 0, line: `stream closed by the server (${why})`}
  const lost = closeCode === 1006 ? '1006: the connection was lost' : why
  return {exitCode: EXIT_UNAVAILABLE, line: `Error: the stream was closed (${lost})`}
}

/** The server's refusal of the stream (its error body when it sent one), said as `events list` says it. */
function refusal(
  status: number,
  body: string | undefined,
  server: string,
  withKey: boolean,
): {exitCode: number; line: string} {
  let said: {code?: string; message?: string} | undefined
  try {
    said = (JSON.parse(body ?? '') as {error?: typeof said}).error
  } catch {
    said = undefined
  }
  const message = said?.message ?? `the server refused the stream with status ${status}`
  const error = withApiKeyHint(new AuditError(errorCode(said?.code, status), message), server, withKey) as AuditError
  const later = status >= 500 ? ` (status ${status}: try again later; its log says why)` : ''
  return {exitCode: exitCodeOf(error), line: `Error: ${errorSentence(error, {given: () => false})}${later}`}
}

export default class Tail extends JsonCommand {
  static override description = 'Print the live event stream of a running server (GET /v1/stream)'

  static override examples = [
    '<%= config.bin %> tail',
    '<%= config.bin %> tail --agent billing-bot --from-index 0 --json',
  ]

  static override flags = {
    server: Flags.string({
      ...serverFlagOptions,
      description: 'URL of the running server',
      default: 'http://127.0.0.1:8080',
    }),
    'api-key': apiKeyFlag,
    trail: trailFlag,
    agent: Flags.string({description: 'only events of this agent'}),
    'action-type': Flags.string({description: 'only events of this action_type'}),
    'from-index': Flags.integer({description: 'first replay stored events from this global index', min: 0}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Tail)
    let url: URL
    try {
      url = streamUrl(flags.server, flags.trail)
    } catch (error) {
      process.stderr.write(`Error: ${(error as Error).message}\n`)
      return this.exit(EXIT_USAGE)
    }
    // Where to resume after a close: past the last event printed, else where the stream started.
    let resumeFrom = flags['from-index']
    const resume = () => (resumeFrom === undefined ? '' : `; resume with --from-index ${resumeFrom}`)
    const filters = {agent_id: flags.agent, action_type: flags['action-type'], from_index: flags['from-index']}
    for (const [name, value] of Object.entries(filters))
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value))
    const ws = new WebSocket(url, {headers: flags['api-key'] ? {authorization: `Bearer ${flags['api-key']}`} : {}})
    const code = await new Promise<number>((resolve) => {
      // The first outcome decides (an error or a refusal is followed by a close; Ctrl-C by ours).
      let settled = false
      const finish = (exitCode: number, line?: string) => {
        if (settled) return
        settled = true
        if (line !== undefined) process.stderr.write(`${line}\n`)
        resolve(exitCode)
      }
      // README.md, "Exit codes": a server that cannot be reached, fails (5xx) or drops the stream is 3.
      ws.on('unexpected-response', (_request, response) => {
        const status = response.statusCode ?? 500
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', () => refused(status, undefined))
        response.on('end', () => refused(status, Buffer.concat(chunks).toString('utf8')))
      })
      const refused = (status: number, body: string | undefined) => {
        const {exitCode, line} = refusal(status, body, flags.server, flags['api-key'] !== undefined)
        finish(exitCode, line)
      }
      ws.on('error', (error) => {
        finish(
          EXIT_UNAVAILABLE,
          `Error: cannot reach the stream at ${url.origin}: ${error.message}; check that the server runs and that ` +
            `--server (or AUDIT_TRAIL_SERVER) gives its URL`,
        )
      })
      ws.on('message', (data) => {
        const text = String(data)
        const message = JSON.parse(text) as StreamMessage
        if (message.type === 'hello') resumeFrom ??= message.tree_size
        if (message.type === 'event' && message.event) resumeFrom = message.event.index + 1
        this.print(message, text)
      })
      ws.on('close', (closeCode, reason) => {
        const {exitCode, line} = closed(closeCode, String(reason))
        finish(exitCode, `${line}${resume()}`)
      })
      process.once('SIGINT', () => {
        finish(0)
        ws.close(1000)
      })
    })
    this.exit(code)
  }

  /** With --json, each stream message as the one JSON line it came as (this.log is silent then). */
  private print(message: StreamMessage, text: string): void {
    if (this.jsonEnabled()) {
      process.stdout.write(`${text}\n`)
      return
    }
    if (message.type === 'hello')
      this.log(colour.dim(`connected: tree size ${message.tree_size}, root ${message.merkle_root}`))
    else if (message.type === 'event' && message.event) {
      const e = message.event
      this.log(
        `${colour.dim(`#${e.index}`)} ${e.timestamp} ${colour.cyan(e.agent_id)} ${e.action_type} ${e.action_name} ` +
          `${e.action_status === 'success' ? colour.green(e.action_status) : colour.red(e.action_status)}`,
      )
    } else if (message.type === 'timestamp' && message.timestamp) {
      this.log(
        colour.yellow(
          `timestamp: tree size ${message.timestamp.tree_size} at ${message.timestamp.timestamp} by ` +
            `${message.timestamp.tsa}`,
        ),
      )
    }
  }
}
