/**
 * The stdio relay (CONTRACT 11; MCP "Transports", stdio): starts the server with the command
 * given after `--`, relays newline-delimited JSON-RPC between it and the client that started the
 * proxy (our stdin and stdout) line by line and byte for byte, lets the server's stderr through,
 * forwards the signals that stop it, and ends with its exit code. Each line is parsed only to be
 * observed; a client's line is forwarded after the observer let it go, a server's before it looks.
 */
import {spawn} from 'node:child_process'
import os from 'node:os'
import {parseFrame} from './jsonrpc.js'
import {LineFramer} from './line-framer.js'
import type {CallScope, McpObserver, StandIn} from './observer.js'

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

export class SpawnError extends Error {}

/** Runs the server and relays until it exits; resolves with its exit code (128 + n for signal n). */
export async function relayStdio(options: StdioRelayOptions): Promise<number> {
  const input = options.input ?? process.stdin
  const output = options.output ?? process.stdout
  const {observer, scope, maxMessageBytes} = options
  const child = spawn(options.command, options.args, {stdio: ['pipe', 'pipe', 'inherit']})
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined))
    child.once('error', resolve)
  })
  if (spawned) throw new SpawnError(`cannot start ${options.command}: ${spawned.message}`)
  const closed = new Promise<number>((resolve) =>
    child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0))),
  )
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward)

  const toClient = (bytes: Buffer | string) => {
    if (!output.write(bytes)) {
      child.stdout.pause()
      output.once('drain', () => child.stdout.resume())
    }
  }
  const toServer = (bytes: Buffer | string) => {
    if (child.stdin.destroyed) return
    if (!child.stdin.write(bytes)) {
      input.pause()
      child.stdin.once('drain', () => input.resume())
    }
  }
  const standIn = (answer: StandIn | undefined) => {
    if (answer) (answer.to === 'client' ? toClient : toServer)(`${answer.text}\n`)
  }
  child.stdin.on('error', (error) => options.note(`cannot write to the server: ${error.message}`, 'server stdin'))
  output.on('error', (error: Error) => options.note(`cannot write to the client: ${error.message}`, 'client stdout'))

  const fromClient = new LineFramer({
    maxBytes: maxMessageBytes,
    onLine(line) {
      const text = lineText(line)
      if (blank(text)) return toServer(line)
      const decision = observer.fromClient(parseFrame(text), scope)
      if (decision.forward) toServer(line)
      else if ('reply' in decision) toClient(`${decision.reply}\n`)
      else
        // A held call waits for its decision (docs/oversight.md) while later lines go on.
        void decision.held.then((held) => {
          if (held.forward) toServer(line)
          else if (held.reply !== undefined) toClient(`${held.reply}\n`)
        })
    },
    onOversized: (line) => standIn(observer.oversized('client', line, scope, maxMessageBytes)),
  })
  const fromServer = new LineFramer({
    maxBytes: maxMessageBytes,
    onLine(line) {
      toClient(line)
      const text = lineText(line)
      if (!blank(text)) observer.fromServer(parseFrame(text), scope)
    },
    onOversized: (line) => standIn(observer.oversized('server', line, scope, maxMessageBytes)),
  })
  const onInput = (chunk: Buffer | string) => fromClient.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))
  // The client closed our input: the server's is closed too, and a server that does not exit on
  // that is stopped as MCP's stdio shutdown says (SIGTERM after a while, then SIGKILL).
  const stopTimers: NodeJS.Timeout[] = []
  const onInputEnd = () => {
    fromClient.end()
    child.stdin.end()
    stopTimers.push(setTimeout(() => child.kill('SIGTERM'), SHUTDOWN_GRACE_MS).unref())
    stopTimers.push(setTimeout(() => child.kill('SIGKILL'), 2 * SHUTDOWN_GRACE_MS).unref())
  }
  input.on('data', onInput)
  input.on('end', onInputEnd)
  child.stdout.on('data', (chunk: Buffer) => fromServer.push(chunk))
  child.stdout.on('end', () => fromServer.end())

  try {
    return await closed
  } finally {
    for (const signal of FORWARDED_SIGNALS) process.off(signal, forward)
    for (const timer of stopTimers) clearTimeout(timer)
    input.off('data', onInput)
    input.off('end', onInputEnd)
    input.pause()
  }
}
