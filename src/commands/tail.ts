import {Command, Flags} from '@oclif/core'
import WebSocket from 'ws'
import {EXIT_USAGE} from '../cli/base.js'
import {colour} from '../cli/output.js'
import type {StoredEvent} from '../core/types.js'

export default class Tail extends Command {
  static override description = 'Print the live event stream of a running server (GET /v1/stream)'

  static override examples = ['<%= config.bin %> tail', '<%= config.bin %> tail --agent billing-bot --from-index 0 --json']

  static override flags = {
    server: Flags.string({description: 'URL of the running server', env: 'AUDIT_TRAIL_SERVER', default: 'http://127.0.0.1:8080'}),
    'api-key': Flags.string({description: 'API key', env: 'AUDIT_TRAIL_API_KEY'}),
    agent: Flags.string({description: 'only events of this agent'}),
    'action-type': Flags.string({description: 'only events of this action_type'}),
    'from-index': Flags.integer({description: 'first replay stored events from this global index', min: 0}),
    json: Flags.boolean({description: 'print each stream message as one JSON line'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Tail)
    const url = new URL('/v1/stream', flags.server.replace(/^http/, 'ws'))
    if (flags.agent) url.searchParams.set('agent_id', flags.agent)
    if (flags['action-type']) url.searchParams.set('action_type', flags['action-type'])
    if (flags['from-index'] !== undefined) url.searchParams.set('from_index', String(flags['from-index']))
    const ws = new WebSocket(url, {headers: flags['api-key'] ? {authorization: `Bearer ${flags['api-key']}`} : {}})
    const code = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_request, response) => {
        process.stderr.write(`Error: the server refused the stream with status ${response.statusCode}\n`)
        resolve(EXIT_USAGE)
      })
      ws.on('error', (error) => {
        process.stderr.write(`Error: cannot reach the stream at ${url.origin}: ${error.message}\n`)
        resolve(EXIT_USAGE)
      })
      ws.on('message', (data) => this.print(String(data), flags.json))
      ws.on('close', (closeCode, reason) => {
        if (closeCode === 1013) process.stderr.write(`stream closed: ${reason} (resume with --from-index)\n`)
        resolve(closeCode === 1000 || closeCode === 1001 ? 0 : EXIT_USAGE)
      })
      process.once('SIGINT', () => {
        ws.close(1000)
        resolve(0)
      })
    })
    this.exit(code)
  }

  private print(text: string, json: boolean): void {
    if (json) return this.log(text)
    const message = JSON.parse(text) as {type: string; event?: StoredEvent; tree_size?: number; merkle_root?: string; timestamp?: {timestamp: string; tree_size: number; tsa: string}}
    if (message.type === 'hello') this.log(colour.dim(`connected: tree size ${message.tree_size}, root ${message.merkle_root}`))
    else if (message.type === 'event' && message.event) {
      const e = message.event
      this.log(`${colour.dim(`#${e.index}`)} ${e.timestamp} ${colour.cyan(e.agent_id)} ${e.action_type} ${e.action_name} ${e.action_status === 'success' ? colour.green(e.action_status) : colour.red(e.action_status)}`)
    } else if (message.type === 'timestamp' && message.timestamp) {
      this.log(colour.yellow(`timestamp: tree size ${message.timestamp.tree_size} at ${message.timestamp.timestamp} by ${message.timestamp.tsa}`))
    }
  }
}
