/**
 * `node --import tsx bench/row-sizes.ts [--events 20000] [--checkout PATH]`: bytes per event on disk
 * in each store after an ingest of the benchmark's events (bench/events.ts, about 700 bytes a body),
 * by table and index. Sizes, not speed: the figures do not depend on how busy the machine is. With
 * --checkout, the same ingest through another checkout's sources (e.g. `git archive` of an earlier
 * commit with this node_modules linked), to compare layouts.
 *
 * Data directory: the files after a clean close (events.sqlite, journals, search.sqlite) and
 * `dbstat` per table and index (the sqlite3 command-line tool). PostgreSQL (127.0.0.1:5432, user
 * postgres, a database made and dropped here): pg_total_relation_size of `events` (heap and TOAST)
 * and pg_relation_size of each of its indexes, after VACUUM.
 */
import {execFileSync} from 'node:child_process'
import {mkdtemp, readdir, rm, stat} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import pg from 'pg'
import {syntheticEvent} from './events.js'

const argv = process.argv.slice(2)
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
const EVENTS = Number(option('--events') ?? 20_000)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const checkout = path.resolve(option('--checkout') ?? root)
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

interface Services {
  ingest: {recordBatch(bodies: unknown[]): Promise<unknown>}
  close(): Promise<void>
}
const {openAudit} = (await import(pathToFileURL(path.join(checkout, 'src/services/audit.ts')).href)) as {
  openAudit(options: {dataDir: string; databaseUrl?: string}): Promise<Services>
}

async function ingest(dataDir: string, databaseUrl?: string): Promise<void> {
  const services = await openAudit({dataDir, databaseUrl})
  for (let from = 0; from < EVENTS; from += 1000) {
    const batch = Array.from({length: Math.min(1000, EVENTS - from)}, (_, k) => syntheticEvent(from + k, 10))
    await services.ingest.recordBatch(batch)
  }
  await services.close()
}

const perEvent = (bytes: number) => (bytes / EVENTS).toFixed(0)

async function dataDirectory(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-row-sizes-'))
  try {
    await ingest(dir)
    const file = path.join(dir, 'events.sqlite')
    let journals = 0
    for (const name of await readdir(dir)) {
      if (name.startsWith('journal-')) journals += (await stat(path.join(dir, name))).size
    }
    console.log(`data directory, ${EVENTS} events: bytes per event`)
    console.log(`  events.sqlite ${perEvent((await stat(file)).size)}, journals ${perEvent(journals)}`)
    console.log(`  search.sqlite ${perEvent((await stat(path.join(dir, 'search.sqlite'))).size)}`)
    const sql = 'SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC'
    for (const line of execFileSync('sqlite3', [file, sql]).toString().trim().split('\n')) {
      const [name, bytes] = line.split('|')
      console.log(`    ${name!.padEnd(36)} ${perEvent(Number(bytes))}`)
    }
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

async function postgres(): Promise<void> {
  const name = `atrail_row_sizes_${process.pid}`
  const admin = new pg.Client({connectionString: ADMIN_URL})
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-row-sizes-'))
  const url = ADMIN_URL.replace(/\/postgres$/, `/${name}`)
  try {
    await ingest(dir, url)
    const client = new pg.Client({connectionString: url})
    await client.connect()
    await client.query('VACUUM ANALYZE events')
    const {rows} = await client.query<{name: string; bytes: string}>(
      `SELECT 'events (heap and TOAST)' AS name, pg_total_relation_size('events') - (SELECT
         coalesce(sum(pg_relation_size(indexrelid)), 0) FROM pg_index WHERE indrelid = 'events'::regclass) AS bytes
       UNION ALL SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index
         WHERE indrelid = 'events'::regclass ORDER BY 2 DESC`,
    )
    await client.end()
    console.log(`PostgreSQL, ${EVENTS} events: bytes per event`)
    let total = 0
    for (const row of rows) {
      total += Number(row.bytes)
      console.log(`    ${row.name.padEnd(36)} ${perEvent(Number(row.bytes))}`)
    }
    console.log(`    ${'events, every index included'.padEnd(36)} ${perEvent(total)}`)
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
    await rm(dir, {recursive: true, force: true})
  }
}

await dataDirectory()
await postgres()
