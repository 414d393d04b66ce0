/** What the PostgreSQL benchmark rows share: their databases, `serve` processes and printed rows. */
import {randomBytes} from 'node:crypto'
import {spawn, type ChildProcess} from 'node:child_process'
import {once} from 'node:events'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import pg from 'pg'

const argv = process.argv.slice(2)
export const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
export const SERVER =
  option('--database-url') ?? process.env.AUDIT_TRAIL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits})

export function record(what: string, value: string, ceiling = ''): void {
  console.log(`${what.padEnd(70)} ${value.padStart(14)}${ceiling ? `   (${ceiling})` : ''}`)
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export async function admin(sql: string, url = SERVER): Promise<void> {
  const client = new pg.Client({connectionString: url})
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** A database of the run's own, `atrail_bench_<random>`, on the server of --database-url. */
export async function createDatabase(): Promise<{url: string; drop(): Promise<void>}> {
  const name = `atrail_bench_${randomBytes(5).toString('hex')}`
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(SERVER)
  url.pathname = `/${name}`
  return {url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)}
}

export interface Served {
  child: ChildProcess
  url: string
  stop(): Promise<void>
}

/** `serve --database-url` (dist/) on a free port; resolves with its URL once it listens. */
export function serve(url: string): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(root, 'bin', 'run.js'), 'serve', '--port', '0', '--database-url', url, '--data-dir', os.tmpdir()],
      {stdio: ['ignore', 'pipe', 'inherit']},
    )
    let out = ''
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
    child.stdout!.on('data', (d) => {
      out += d
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match) resolve({child, url: match[1]!, stop})
    })
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)))
  })
}
