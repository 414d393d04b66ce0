/**
 * `npm run bench -- --store postgres [--events N] [--database-url URL]`: the PostgreSQL store's rows,
 * each beside its ceiling measured in the same run, printed (docs/scaling.md takes its figures from
 * here). The database server at --database-url (default: the test server) gets two databases of its
 * own, `atrail_bench_<random>`, dropped at the end.
 */
import {randomBytes} from 'node:crypto'
import {spawn, type ChildProcess} from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import pg from 'pg'
import {v7 as uuidv7} from 'uuid'
import {computeEventHash, validateEvent} from '../src/core/event/index.js'
import {GENESIS_HASH, type StoredEvent} from '../src/core/types.js'
import {openAudit} from '../src/services/audit.js'
import {EVENT_COLUMNS, eventColumns, INSERT_EVENTS} from '../src/store/postgres/schema.js'
import {openPostgresStore} from '../src/store/index.js'
import {syntheticEvent} from './events.js'

const argv = process.argv.slice(2)
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
const EVENTS = Number(option('--events') ?? 0) || 100_000
const SERVER = option('--database-url') ?? process.env.AUDIT_TRAIL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const BATCH = 1000
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits})

function record(what: string, value: string, ceiling = ''): void {
  console.log(`${what.padEnd(70)} ${value.padStart(14)}${ceiling ? `   (${ceiling})` : ''}`)
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({connectionString: SERVER})
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

async function createDatabase(): Promise<{url: string; drop(): Promise<void>}> {
  const name = `atrail_bench_${randomBytes(5).toString('hex')}`
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(SERVER)
  url.pathname = `/${name}`
  return {url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)}
}

/** Stored events as the service would make them: the rows of the raw-insert ceiling. */
function storedEvents(from: number, count: number, heads: Map<string, {sequence: number; hash: string}>): StoredEvent[] {
  const now = new Date()
  const out: StoredEvent[] = []
  for (let i = from; i < from + count; i++) {
    const {event} = validateEvent(syntheticEvent(i), {now, generateId: uuidv7})
    const head = heads.get(event.agent_id)
    const content = {...event, sequence: (head?.sequence ?? 0) + 1, prev_hash: head?.hash ?? GENESIS_HASH, recorded_at: now.toISOString()}
    const hash = computeEventHash(content)
    heads.set(event.agent_id, {sequence: content.sequence, hash})
    out.push({...content, hash, index: i})
  }
  return out
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** `serve --database-url` on a free port; resolves with its URL. */
function serve(url: string): Promise<{child: ChildProcess; url: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'run.js'), 'serve', '--port', '0', '--database-url', url, '--data-dir', os.tmpdir()], {stdio: ['ignore', 'pipe', 'inherit']})
    let out = ''
    child.stdout!.on('data', (d) => {
      out += d
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match) resolve({child, url: match[1]!})
    })
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)))
  })
}

console.log(`audit-trail PostgreSQL benchmark: ${fmt(EVENTS)} events, ${os.cpus().length} x ${os.cpus()[0]?.model}, node ${process.version}\n`)
const target = await createDatabase()
const ceiling = await createDatabase()
try {
  // Ceiling: the same rows (hashed beforehand) into the same tables with the same multi-row insert,
  // without sequencing, the lock, the aggregates or the tree.
  await (await openPostgresStore({databaseUrl: ceiling.url})).close()
  const raw = new pg.Client({connectionString: ceiling.url})
  await raw.connect()
  const heads = new Map<string, {sequence: number; hash: string}>()
  let rawMs = 0
  for (let i = 0; i < EVENTS; i += BATCH) {
    const events = storedEvents(i, Math.min(BATCH, EVENTS - i), heads)
    const columns: unknown[][] = EVENT_COLUMNS.map(() => [])
    for (const event of events) eventColumns(event).forEach((value, c) => columns[c]!.push(value))
    const t0 = performance.now()
    await raw.query(INSERT_EVENTS, columns)
    rawMs += performance.now() - t0
  }
  await raw.end()
  const rawRate = EVENTS / (rawMs / 1000)
  record('ceiling: raw multi-row insert of the same rows (no hashing, no tree)', `${fmt(rawRate)} /s`)

  let services = await openAudit({dataDir: os.tmpdir(), databaseUrl: target.url})
  const t0 = performance.now()
  for (let i = 0; i < EVENTS; i += BATCH) {
    const bodies = Array.from({length: Math.min(BATCH, EVENTS - i)}, (_, j) => syntheticEvent(i + j))
    if ((await services.ingest.recordBatch(bodies)).status !== 201) throw new Error('ingest failed')
  }
  const ingestRate = EVENTS / ((performance.now() - t0) / 1000)
  record('batch ingest through the service, batches of 1,000', `${fmt(ingestRate)} /s`, `${fmt(ingestRate / rawRate, 2)} of raw; target >= 0.5`)
  await services.close()

  const s0 = performance.now()
  services = await openAudit({dataDir: os.tmpdir(), databaseUrl: target.url})
  record('start-up (store opened, tree read)', `${fmt((performance.now() - s0) / 1000, 2)} s`, `RSS ${fmt(process.memoryUsage().rss / 2 ** 20)} MB; target < 2 s, < 300 MB at 1M`)

  const queries: number[] = []
  const searches: number[] = []
  for (let i = 0; i < 200; i++) {
    let q0 = performance.now()
    await services.query.listEvents({agent_id: `agent-${i % 50}`, limit: '50', offset: String((i * 7) % 100)})
    queries.push(performance.now() - q0)
    q0 = performance.now()
    await services.query.search({q: `customer-${i % 1000}`, limit: '50'})
    searches.push(performance.now() - q0)
  }
  record('query p99 (GET /v1/events by agent, one page)', `${fmt(percentile(queries, 99), 2)} ms`, 'target < 10 ms at 1M')
  record('rare-term search p99', `${fmt(percentile(searches, 99), 2)} ms`, 'target < 50 ms at 1M')

  const v0 = performance.now()
  const verified = await services.integrity.verifyAll()
  if (!verified.valid) throw new Error('chains do not verify')
  record('chain verification of all events', `${fmt(EVENTS / ((performance.now() - v0) / 1000))} /s`, 'target >= 100,000 /s')
  await services.close()

  // Two processes against one database, single events over HTTP from 20 concurrent writers each.
  for (const processes of [1, 2]) {
    const servers = await Promise.all(Array.from({length: processes}, () => serve(target.url)))
    const perWriter = Math.min(200, Math.ceil(EVENTS / 400))
    const w0 = performance.now()
    await Promise.all(servers.flatMap((server) => Array.from({length: 20}, async (_, w) => {
      for (let n = 0; n < perWriter; n++) {
        const response = await fetch(`${server.url}/v1/events`, {method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify(syntheticEvent(w * perWriter + n))})
        if (response.status !== 201) throw new Error(`HTTP ${response.status}`)
      }
    })))
    const rate = (processes * 20 * perWriter) / ((performance.now() - w0) / 1000)
    record(`single events over HTTP, ${processes} serve process(es) on one database, 20 writers each`, `${fmt(rate)} /s`)
    for (const server of servers) server.child.kill('SIGTERM')
  }
} finally {
  await target.drop()
  await ceiling.drop()
}
