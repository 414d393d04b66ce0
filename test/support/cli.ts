/** Runs the real CLI (`bin/run.js`, the compiled oclif layout) as a user would. */
import {spawn, type ChildProcess} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const BIN = path.join(ROOT, 'bin', 'run.js')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export function runCli(
  args: string[],
  options: {input?: string; env?: Record<string, string>; cwd?: string} = {},
): Promise<CliResult> {
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
