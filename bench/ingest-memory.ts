/**
 * `node --import tsx bench/ingest-memory.ts [--events 200000] [--every 100000] [--checkout PATH]`:
 * where the memory of a data directory goes over an ingest (docs/benchmarks.md, "The embedded
 * store's memory"). Ingests the benchmark's events (bench/events.ts) through the ingest service in
 * batches of 1,000, in this process, and at every `--every` events prints the RSS, its peak so far
 * (VmHWM), V8's heap, the ArrayBuffers (sql.js's in-memory file lives in one), and the database's
 * size (events.sqlite as SQLite counts it). Memory figures hold on a busy machine; times do not.
 */
import {readFileSync} from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {syntheticEvent} from './events.js'

const argv = process.argv.slice(2)
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
const EVENTS = Number(option('--events') ?? 200_000)
const EVERY = Number(option('--every') ?? 100_000)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const checkout = path.resolve(option('--checkout') ?? root)

interface Services {
  ingest: {recordBatch(bodies: unknown[]): Promise<unknown>}
  store: {storage(): {used_bytes?: number} | Promise<{used_bytes?: number}>}
  close(): Promise<void>
}
const {openAudit} = (await import(pathToFileURL(path.join(checkout, 'src/services/audit.ts')).href)) as {
  openAudit(options: {dataDir: string}): Promise<Services>
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0).padStart(6)
const peak = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024

function line(label: string, database: number | undefined): void {
  const m = process.memoryUsage()
  console.log(
    `${label.padEnd(18)} RSS ${mb(m.rss)} MB  peak ${mb(peak())} MB  heap ${mb(m.heapUsed)} MB  ` +
      `ArrayBuffers ${mb(m.arrayBuffers)} MB  external ${mb(m.external)} MB` +
      (database === undefined ? '' : `  database ${mb(database)} MB`),
  )
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-ingest-memory-'))
try {
  const services = await openAudit({dataDir: dir})
  line('opened', undefined)
  for (let from = 0; from < EVENTS; from += 1000) {
    const batch = Array.from({length: Math.min(1000, EVENTS - from)}, (_, k) => syntheticEvent(from + k, 10))
    await services.ingest.recordBatch(batch)
    const done = from + batch.length
    if (done % EVERY === 0) line(`${done} events`, (await services.store.storage()).used_bytes)
  }
  await services.close()
  line('closed', undefined)
} finally {
  await rm(dir, {recursive: true, force: true})
}
