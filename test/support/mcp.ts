/**
 * Helpers of the MCP proxy's tests: a log that can go away and come back on the same address,
 * and the proxy itself (`bin/run.js mcp-proxy`) between a client and a server.
 */
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import http from 'node:http'
import path from 'node:path'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type ClientCapabilities,
} from '@modelcontextprotocol/sdk/types.js'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {createApp} from '../../src/server/app.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import type {StoredEvent} from '../../src/core/types.js'
import {BIN, ROOT} from './cli.js'
import {removeDir, tempDir} from './harness.js'
import {opened} from './hooks.js'
import {freePort, listenOn, listenOutsideEphemeral} from './ports.js'

export interface SwitchableLog {
  url: string
  services: AuditServices
  /** Every stored event, index order. */
  events(): Promise<StoredEvent[]>
  /** Stops answering: connections are refused, as of a server that went away. */
  down(): Promise<void>
  /** Answers again on the same address. */
  up(): Promise<void>
  close(): Promise<void>
}

/**
 * The real service (createApp over a fresh data directory) on a loopback port it keeps; `apiKeys`:
 * the text of a key file (`serve --api-keys`).
 */
export async function startSwitchableLog(
  options: {startDown?: boolean; apiKeys?: string} = {},
): Promise<SwitchableLog> {
  const dataDir = await tempDir()
  const services = await openAudit({dataDir})
  const apiKeys = options.apiKeys === undefined ? undefined : parseKeyFile(options.apiKeys)
  const app = createApp(services, {logError: () => undefined, apiKeys})
  let server: http.Server | undefined
  let port: number | undefined
  const up = async () => {
    const listening = http.createServer(app.callback())
    port = port === undefined ? await listenOutsideEphemeral(listening) : await listenOn(listening, port)
    server = listening
  }
  const down = async () => {
    const closing = server
    server = undefined
    if (!closing) return
    await new Promise<void>((resolve) => {
      closing.close(() => resolve())
      closing.closeAllConnections()
    })
  }
  await up()
  const url = `http://127.0.0.1:${port}`
  if (options.startDown) await down()
  return {
    url,
    services,
    async events() {
      const all: StoredEvent[] = []
      for (let offset = 0; ; offset += 1000) {
        const page = await services.query.listEvents({limit: '1000', offset: String(offset)})
        all.push(...page.events)
        if (page.events.length < 1000) return all
      }
    },
    down,
    up,
    async close() {
      await down()
      await services.close()
      await removeDir(dataDir)
    },
  }
}

/**
 * A switchable log (startSwitchableLog) for each test of the calling describe, closed after it; the
 * handle stands for the current one. With a temporary directory for the proxy's `--state-dir`
 * (useTempDir), this is what a proxy test sets up.
 */
export function useSwitchableLog(options: Parameters<typeof startSwitchableLog>[0] = {}): SwitchableLog {
  return opened(
    () => startSwitchableLog(options),
    (log) => log.close(),
  )
}

/** Polls `check` until it holds or `ms` pass (then it runs once more, to fail with its own message). */
export async function eventually<T>(check: () => Promise<T>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/** The pid of a process that has exited: a queue segment named with it is an orphan. */
export function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {encoding: 'utf8'}).stdout.trim())
}

export const SERVER_EVERYTHING = path.join(ROOT, 'node_modules', '.bin', 'mcp-server-everything')
export const SERVER_FILESYSTEM = path.join(ROOT, 'node_modules', '.bin', 'mcp-server-filesystem')

/**
 * An SDK Client named `name` that answers the requests a server may send it for the capabilities
 * it declares: sampling and elicitation with fixed answers, roots with one root.
 */
export function newClient(name = 'test-agent', capabilities: ClientCapabilities = {}): Client {
  const client = new Client({name, version: '1.0.0'}, {capabilities})
  if (capabilities.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      model: 'fixed-model',
      role: 'assistant',
      content: {type: 'text', text: `sampled: ${JSON.stringify(request.params.messages[0]?.content)}`},
    }))
  if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, async () => ({action: 'decline'}))
  if (capabilities.roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({roots: [{uri: 'file:///srv/docs', name: 'docs'}]}))
  return client
}

export interface StdioConnection {
  client: Client
  /** What the process wrote on stderr so far (the proxy's notices and the server's own lines). */
  stderr(): string
  close(): Promise<void>
}

/**
 * The SDK's Client over stdio to `command`: the server itself, or the proxy (`proxied`) in front
 * of it with `flags` (see newClient for the capabilities).
 */
export async function connectStdio(
  command: string[],
  options: {proxy?: string[]; name?: string; capabilities?: ClientCapabilities} = {},
): Promise<StdioConnection> {
  const [file, args] = options.proxy
    ? [process.execPath, [BIN, 'mcp-proxy', ...options.proxy, '--', ...command]]
    : [command[0]!, command.slice(1)]
  const transport = new StdioClientTransport({command: file, args, stderr: 'pipe'})
  let stderr = ''
  transport.stderr?.on('data', (chunk) => (stderr += chunk))
  const client = newClient(options.name, options.capabilities)
  await client.connect(transport)
  return {client, stderr: () => stderr, close: () => client.close()}
}

/** A process started by a test, with what it wrote on stderr so far. */
export interface Started {
  child: ChildProcess
  stderr(): string
  stop(): Promise<number>
}

function started(child: ChildProcess): Started {
  let stderr = ''
  child.stderr?.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1))),
  )
  return {
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** Waits until `child` writes a line matching `pattern` on stderr; resolves with the match. */
function awaitStderr(process: Started, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(process.stderr())
      if (match) {
        process.child.stderr?.off('data', check)
        resolve(match)
      }
    }
    process.child.stderr?.on('data', check)
    process.child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${process.stderr()}`)))
    check()
  })
}

/** server-everything's Streamable HTTP transport on a free port; resolves with its endpoint URL. */
export async function startEverythingHttp(): Promise<Started & {url: string}> {
  const port = await freePort()
  const child = spawn(SERVER_EVERYTHING, ['streamableHttp'], {
    env: {...process.env, PORT: String(port)},
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const server = started(child)
  await awaitStderr(server, /listening on port/, 'server-everything')
  return {...server, url: `http://127.0.0.1:${port}/mcp`}
}

/** `mcp-proxy --listen 127.0.0.1:0 --upstream URL` with `flags`; resolves with the URL it serves. */
export async function startHttpProxy(upstream: string, flags: string[]): Promise<Started & {url: string}> {
  const child = spawn(
    process.execPath,
    [BIN, 'mcp-proxy', '--listen', '127.0.0.1:0', '--upstream', upstream, ...flags],
    {stdio: ['ignore', 'ignore', 'pipe']},
  )
  const proxy = started(child)
  const match = await awaitStderr(proxy, /listening on (\S+),/, 'mcp-proxy')
  return {...proxy, url: match[1]!}
}

export const SCRIPTED_SERVER = path.join(ROOT, 'test', 'commands', 'fixtures', 'scripted-mcp-server.mjs')

/** A client that speaks raw bytes to `mcp-proxy` over stdio, and keeps every byte it gets back. */
export interface RawClient extends Started {
  send(bytes: string | Buffer): Promise<void>
  /** Resolves once the proxy's stdout contains `text`. */
  until(text: string): Promise<void>
  stdout(): Buffer
  end(): Promise<number>
}

export function startRawProxy(flags: string[], command: string[]): RawClient {
  const child = spawn(process.execPath, [BIN, 'mcp-proxy', ...flags, '--', ...command], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const process_ = started(child)
  const chunks: Buffer[] = []
  const waiters: Array<() => void> = []
  child.stdout!.on('data', (chunk: Buffer) => {
    chunks.push(chunk)
    for (const wake of waiters.splice(0)) wake()
  })
  const stdout = () => Buffer.concat(chunks)
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)))
  return {
    ...process_,
    stdout,
    send: (bytes) => new Promise((resolve, reject) => child.stdin!.write(bytes, (e) => (e ? reject(e) : resolve()))),
    async until(text) {
      const deadline = Date.now() + 30_000
      while (!stdout().includes(text)) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no ${text} in the output: ${stdout().toString().slice(-500)}\n${process_.stderr()}`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 200)
        })
      }
    },
    async end() {
      child.stdin!.end()
      return exited
    },
  }
}
