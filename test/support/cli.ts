/**
 * Runs the CLI as a user would: `runCli` inside the test process (the oclif config of `bin/run.js`
 * read from its manifest, output captured, the exit code mapped as `bin/run.js` maps it), `spawnCli` as a real
 * `bin/run.js` process for the tests where the process itself is under test (docs/testing.md).
 */
import {spawn, type ChildProcess} from 'node:child_process'
import path from 'node:path'
import {PassThrough} from 'node:stream'
import {fileURLToPath} from 'node:url'
import {Config, Errors, run} from '@oclif/core'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const BIN = path.join(ROOT, 'bin', 'run.js')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export interface CliOptions {
  input?: string
  env?: Record<string, string>
  cwd?: string
}

let queue: Promise<unknown> = Promise.resolve()

/**
 * Runs `bin/run.js ARGS` in this process, as `spawnCli` would in a child: stdin is `input` then end
 * of file, stdout and stderr are pipes (no terminal, so no colour), NO_COLOR=1 and `env` are set and
 * `cwd` is the working directory for this call only. Calls run one at a time, as each swaps
 * process-wide state. A command that calls process.exit fails, saying to use spawnCli.
 */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const result = queue.then(() => runInProcess(args, options))
  queue = result.catch(() => undefined)
  return result
}

/** Past this an in-process call is given up (its output restored), so one hang fails one test, not the rest. */
const IN_PROCESS_LIMIT_MS = 60_000

class StillRunning extends Error {}

async function runInProcess(args: string[], options: CliOptions): Promise<CliResult> {
  // A config of its own per call, as each bin/run.js process has: oclif's help rewrites the command
  // ids of the config it shows (events:list becomes "events list"), so a shared one would drift.
  const loaded = await Config.load(BIN)
  const call = new InProcessCall(args, options)
  let timer: NodeJS.Timeout | undefined
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const command = ['bin/run.js', ...args].join(' ')
      reject(new StillRunning(`${command} still runs in-process after ${IN_PROCESS_LIMIT_MS} ms: use spawnCli for it`))
    }, IN_PROCESS_LIMIT_MS)
  })
  let code: number
  try {
    try {
      await Promise.race([run(args, loaded), hung])
      code = Number(process.exitCode ?? 0)
    } catch (error) {
      if (error instanceof StillRunning) throw error
      code = await call.handle(error as Error)
    }
  } finally {
    clearTimeout(timer)
    call.restore()
  }
  return {code, stdout: call.stdout(), stderr: call.stderr()}
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** The process-wide state one in-process call swaps, and puts back. */
class InProcessCall {
  readonly #out: Buffer[] = []
  readonly #err: Buffer[] = []
  readonly #undo: (() => void)[] = []
  readonly #listeners = new Map<string, unknown[]>()

  constructor(args: string[], options: CliOptions) {
    this.#swap(process, 'argv', [process.execPath, BIN, ...args])
    const exitCode = process.exitCode
    process.exitCode = undefined
    this.#undo.push(() => (process.exitCode = exitCode))
    this.#swap(process, 'exit', (code?: number) => {
      throw new Error(`process.exit(${code ?? ''}) called in-process: run this command with spawnCli`)
    })
    const stdin = new PassThrough()
    stdin.end(options.input ?? '')
    this.#swap(process, 'stdin', stdin)
    this.#capture(process.stdout, this.#out)
    this.#capture(process.stderr, this.#err)
    for (const [name, value] of Object.entries({NO_COLOR: '1', ...options.env})) this.#setEnv(name, value)
    const cwd = process.cwd()
    process.chdir(options.cwd ?? ROOT)
    this.#undo.push(() => process.chdir(cwd))
    for (const event of [...SIGNALS, 'exit']) this.#listeners.set(event, process.listeners(event as 'exit'))
  }

  stdout(): string {
    return Buffer.concat(this.#out).toString('utf8')
  }

  stderr(): string {
    return Buffer.concat(this.#err).toString('utf8')
  }

  /** What `bin/run.js` does with an error (oclif's handle: message, help, exit code), without exiting. */
  async handle(error: Error): Promise<number> {
    const codes: number[] = []
    const exit = process.exit
    process.exit = ((code?: number) => void codes.push(code ?? 0)) as typeof process.exit
    try {
      await Errors.handle(error)
    } finally {
      process.exit = exit
    }
    return codes[0] ?? 1
  }

  /** Puts everything back; runs and drops the exit listeners the command added, as its exit would. */
  restore(): void {
    const added = (event: string) =>
      process.listeners(event as 'exit').filter((listener) => !this.#listeners.get(event)!.includes(listener))
    for (const listener of added('exit')) {
      process.off('exit', listener)
      listener(0)
    }
    for (const signal of SIGNALS) {
      for (const listener of added(signal)) process.off(signal, listener as unknown as NodeJS.SignalsListener)
    }
    for (const undo of this.#undo.reverse()) undo()
  }

  #swap<T extends object>(target: T, key: string, value: unknown): void {
    const own = Object.getOwnPropertyDescriptor(target, key)
    Object.defineProperty(target, key, {configurable: true, enumerable: own?.enumerable ?? true, writable: true, value})
    this.#undo.push(() => {
      if (own) Object.defineProperty(target, key, own)
      else delete (target as Record<string, unknown>)[key]
    })
  }

  #capture(stream: NodeJS.WriteStream, chunks: Buffer[]): void {
    this.#swap(stream, 'isTTY', undefined)
    this.#swap(stream, 'write', (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
      chunks.push(
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk),
      )
      const done = typeof encoding === 'function' ? encoding : callback
      if (typeof done === 'function') process.nextTick(done as () => void)
      return true
    })
  }

  #setEnv(name: string, value: string): void {
    const before = process.env[name]
    process.env[name] = value
    this.#undo.push(() => {
      if (before === undefined) delete process.env[name]
      else process.env[name] = before
    })
  }
}

/** Runs `bin/run.js ARGS` as a child process: for the tests where the process itself is under test. */
export function spawnCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: {...process.env, NO_COLOR: '1', ...options.env},
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({code: code ?? -1, stdout, stderr}))
    child.stdin.end(options.input ?? '')
  })
}

/** Starts `bin/run.js serve` on a free loopback port (in `cwd`, default ROOT); resolves with its URL on listening. */
export function startServe(
  args: string[],
  options: {cwd?: string} = {},
): Promise<{
  child: ChildProcess
  url: string
  output: () => string
  exited: Promise<number>
  stop(signal?: NodeJS.Signals): Promise<number>
}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
      cwd: options.cwd ?? ROOT,
      env: {...process.env, NO_COLOR: '1'},
    })
    let out = ''
    const exited = new Promise<number>((r) => child.on('exit', (code, signal) => r(code ?? (signal ? 128 : -1))))
    child.stdout.on('data', (d) => {
      out += d
      const match = /listening on (http:\/\/[^\s]+)/.exec(out)
      if (match)
        resolve({
          child,
          url: match[1]!,
          output: () => out,
          exited,
          stop: async (signal = 'SIGTERM') => {
            child.kill(signal)
            return exited
          },
        })
    })
    child.stderr.on('data', (d) => (out += d))
    void exited.then((code) => reject(new Error(`serve exited with ${code} before listening: ${out}`)))
  })
}

/** Starts `bin/run.js witness serve` on a free loopback port; resolves once it listens, with its key. */
export function startWitness(args: string[]): Promise<{url: string; key: string; stop(): Promise<void>}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'witness', 'serve', '--port', '0', ...args], {
      cwd: ROOT,
      env: {...process.env, NO_COLOR: '1'},
    })
    let out = ''
    const exited = new Promise<void>((r) => child.on('exit', () => r()))
    child.stdout.on('data', (d) => {
      out += d
      const match = /listening on (http:\/\/\S+)[\s\S]*witness key: (\S+)/.exec(out)
      if (match)
        resolve({
          url: match[1]!,
          key: match[2]!,
          stop: async () => {
            child.kill('SIGTERM')
            await exited
          },
        })
    })
    child.stderr.on('data', (d) => (out += d))
    void exited.then(() => reject(new Error(`witness serve exited before listening: ${out}`)))
  })
}
