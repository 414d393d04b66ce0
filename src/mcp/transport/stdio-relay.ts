/**
 * The stdio relay (docs/mcp.md; MCP "Transports", stdio): starts the server with the command
 * given after `--`, relays newline-delimited JSON-RPC between it and the client that started the
 * proxy (our stdin and stdout) line by line and byte for byte, lets the server's stderr through,
 * forwards the signals that stop it, and ends with its exit code. Each line is parsed only to be
 * observed; a client's line is forwarded after the observer let it go, a server's before it looks.
 */
import {spawn, type ChildProcessByStdio} from 'node:child_process'
import type {Readable, Writable} from 'node:stream'
import os from 'node:os'
import {parseFrame} from '../jsonrpc.js'
import {LineFramer} from './line-framer.js'
import type {CallScope, McpObserver, StandIn} from '../record/observer.js'
import {CodedError} from '../../core/coded-error.js'

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
/** How long a server may take to exit once its input is closed (MCP "Lifecycle", shutdown over stdio). */
const SHUTDOWN_GRACE_MS = 5_000

interface StdioRelayOptions {
  command: string
  args: string[]
  observer: McpObserver
  scope: CallScope
  maxMessageBytes: number
  note(line: string, kind?: string): void
  input?: NodeJS.ReadableStream
  output?: NodeJS.WritableStream
}

/** The line without its terminator (`\n`, or `\r\n` as the SDK's ReadBuffer also accepts). */
function lineText(line: Buffer): string {
  let end = line.length
  if (end > 0 && line[end - 1] === 0x0a) end--
  if (end > 0 && line[end - 1] === 0x0d) end--
  return line.toString('utf8', 0, end)
}

/** Whether a line holds nothing but whitespace (relayed, not observed). */
function blank(text: string): boolean {
  return text.trim() === ''
}

/** The stdio relay's one error class: the server command could not be started at all. */
export type SpawnErrorCode =
  /** The command is missing, not executable, or spawn failed before the process ran (ENOENT, EACCES). */
  'cannot_start'

export class SpawnError extends CodedError<SpawnErrorCode> {
  override name = 'SpawnError'
}

type ServerProcess = ChildProcessByStdio<Writable, Readable, null>

/** Starts the server with its stdin and stdout piped to the relay; a command that cannot start is a SpawnError. */
async function spawnServer(command: string, args: string[]): Promise<ServerProcess> {
  const child = spawn(command, args, {stdio: ['pipe', 'pipe', 'inherit']})
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined))
    child.once('error', resolve)
  })
  if (spawned) throw new SpawnError('cannot_start', `cannot start ${command}: ${spawned.message}`)
  return child
}

/**
 * The stdio relay between the client (our stdin and stdout) and one server process, a class as
 * the MCP SDK's transports are: the streams and the two line framers are its state, each side's
 * line has its method.
 */
class StdioRelay {
  readonly #options: StdioRelayOptions
  readonly #input: NodeJS.ReadableStream
  readonly #output: NodeJS.WritableStream
  readonly #child: ServerProcess
  readonly #fromClient: LineFramer
  readonly #fromServer: LineFramer
  readonly #stopTimers: NodeJS.Timeout[] = []

  constructor(options: StdioRelayOptions, child: ServerProcess) {
    this.#options = options
    this.#input = options.input ?? process.stdin
    this.#output = options.output ?? process.stdout
    this.#child = child
    const {observer, scope, maxMessageBytes} = options
    this.#fromClient = new LineFramer({
      maxBytes: maxMessageBytes,
      onLine: (line) => this.#clientLine(line),
      onOversized: (line) => this.#standIn(observer.oversized('client', line, scope, maxMessageBytes)),
    })
    this.#fromServer = new LineFramer({
      maxBytes: maxMessageBytes,
      onLine: (line) => this.#serverLine(line),
      onOversized: (line) => this.#standIn(observer.oversized('server', line, scope, maxMessageBytes)),
    })
  }

  /** Relays until the server exits; resolves with its exit code (128 + n for signal n). */
  async run(): Promise<number> {
    const child = this.#child
    const closed = new Promise<number>((resolve) =>
      child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0))),
    )
    const forward = (signal: NodeJS.Signals) => child.kill(signal)
    for (const signal of FORWARDED_SIGNALS) process.on(signal, forward)
    const note = this.#options.note
    child.stdin.on('error', (error) => note(`cannot write to the server: ${error.message}`, 'server stdin'))
    this.#output.on('error', (error: Error) => note(`cannot write to the client: ${error.message}`, 'client stdout'))
    this.#input.on('data', this.#onInput)
    this.#input.on('end', this.#onInputEnd)
    child.stdout.on('data', (chunk: Buffer) => this.#fromServer.push(chunk))
    child.stdout.on('end', () => this.#fromServer.end())
    try {
      return await closed
    } finally {
      for (const signal of FORWARDED_SIGNALS) process.off(signal, forward)
      for (const timer of this.#stopTimers) clearTimeout(timer)
      this.#input.off('data', this.#onInput)
      this.#input.off('end', this.#onInputEnd)
      this.#input.pause()
    }
  }

  #toClient(bytes: Buffer | string): void {
    if (!this.#output.write(bytes)) {
      this.#child.stdout.pause()
      this.#output.once('drain', () => this.#child.stdout.resume())
    }
  }

  #toServer(bytes: Buffer | string): void {
    const stdin = this.#child.stdin
    if (stdin.destroyed) return
    if (!stdin.write(bytes)) {
      this.#input.pause()
      stdin.once('drain', () => this.#input.resume())
    }
  }

  #standIn(answer: StandIn | undefined): void {
    if (answer === undefined) return
    if (answer.to === 'client') this.#toClient(`${answer.text}\n`)
    else this.#toServer(`${answer.text}\n`)
  }

  /** A client's line goes on once the observer lets it go. */
  #clientLine(line: Buffer): void {
    const text = lineText(line)
    if (blank(text)) return this.#toServer(line)
    const decision = this.#options.observer.fromClient(parseFrame(text), this.#options.scope)
    if (decision.forward) this.#toServer(line)
    else if ('reply' in decision) this.#toClient(`${decision.reply}\n`)
    else
      // A held call waits for its decision (docs/oversight.md) while later lines go on.
      void decision.held.then((held) => {
        if (held.forward) this.#toServer(line)
        else if (held.reply !== undefined) this.#toClient(`${held.reply}\n`)
      })
  }

  /** A server's line goes on before the observer looks at it. */
  #serverLine(line: Buffer): void {
    this.#toClient(line)
    const text = lineText(line)
    if (!blank(text)) this.#options.observer.fromServer(parseFrame(text), this.#options.scope)
  }

  readonly #onInput = (chunk: Buffer | string): void =>
    this.#fromClient.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))

  // The client closed our input: the server's is closed too, and a server that does not exit on
  // that is stopped as MCP's stdio shutdown says (SIGTERM after a while, then SIGKILL).
  readonly #onInputEnd = (): void => {
    this.#fromClient.end()
    this.#child.stdin.end()
    this.#stopTimers.push(setTimeout(() => this.#child.kill('SIGTERM'), SHUTDOWN_GRACE_MS).unref())
    this.#stopTimers.push(setTimeout(() => this.#child.kill('SIGKILL'), 2 * SHUTDOWN_GRACE_MS).unref())
  }
}

/** Runs the server and relays until it exits; resolves with its exit code (128 + n for signal n). */
export async function relayStdio(options: StdioRelayOptions): Promise<number> {
  return new StdioRelay(options, await spawnServer(options.command, options.args)).run()
}
