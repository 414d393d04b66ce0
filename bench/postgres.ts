/**
 * `npm run bench -- --store postgres [--events N] [--database-url URL]`: the PostgreSQL store's rows,
 * each beside its ceiling measured in the same run, printed (docs/scaling.md takes its figures from
 * here). The database server at --database-url (default: the test server) gets two databases of its
 * own, `atrail_bench_<random>`, dropped at the end.
 */
import {execFileSync} from 'node:child_process'
import {once} from 'node:events'
import {readFileSync} from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import http from 'node:http'
import autocannon from 'autocannon'
import Koa from 'koa'
import {koaBody} from 'koa-body'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import {v7 as uuidv7} from 'uuid'
import {validateEvent} from '../src/core/event/index.js'
import {openAudit} from '../src/services/audit.js'
import {EVENT_COLUMNS, eventColumns, INSERT_EVENTS} from '../src/store/postgres/schema.js'
import {openPostgresStore} from '../src/store/index.js'
import {storedEvents, syntheticEvent} from './events.js'
import {createDatabase, fmt, option, percentile, record, root, serve} from './postgres-support.js'
import {readRows} from './postgres-reads.js'
import {workloadOrderRows} from './workload-order.js'
import {besideCeiling, oneThreadCeiling} from './verify-ceiling.js'

const EVENTS = Number(option('--events') ?? 0) || 100_000
const BATCH = 1000
/** Seconds of each HTTP load (autocannon). */
const SECONDS = Number(option('--duration') ?? 0) || 8
/** Opens the store as serve does, in this fresh process: time, RSS, size as JSON. */
const STARTUP = `const {openAudit} = await import(process.env.BENCH_AUDIT)
const t0 = performance.now()
const dataDir = (await import('node:os')).tmpdir()
const services = await openAudit({dataDir, databaseUrl: process.env.BENCH_DATABASE_URL})
const ms = performance.now() - t0
const rss = process.memoryUsage().rss
const size = await services.tree.size()
await services.close()
console.log(JSON.stringify({ms, rss, size}))`

/**
 * The lock hold time per group commit (the store's onGroupCommit: the write statement, which takes the
 * lock and commits, or from the lock to the end of COMMIT for a group another writer overtook) and the
 * rate, for groups of 1, 10 and 100 events, with one writer and with two (two pools, as two processes
 * have), each given 4 groups at a time (a store writes one after the other, docs/postgres.md): one
 * log's ceiling is 1000 / hold ms x group size.
 */
async function lockHoldTimes(url: string): Promise<void> {
  const now = new Date()
  for (const group of [1, 10, 100]) {
    for (const writers of [1, 2]) {
      const held: number[] = []
      const stores = await Promise.all(
        Array.from({length: writers}, () =>
          openPostgresStore({databaseUrl: url, onGroupCommit: (ms) => held.push(ms)}),
        ),
      )
      const groups = Math.max(20, Math.floor(Math.min(EVENTS, 20_000) / group / writers / 4))
      let next = 10_000_000 * group + writers * 1_000_000
      const t0 = performance.now()
      await Promise.all(
        stores.flatMap((store) =>
          Array.from({length: 4}, async () => {
            for (let g = 0; g < groups; g++) {
              const requests = Array.from({length: group}, () => ({
                items: [validateEvent(syntheticEvent(next++), {now, generateId: uuidv7})],
                recordedAt: now.toISOString(),
              }))
              await store.recordEvents(requests)
            }
          }),
        ),
      )
      const rate = (writers * 4 * groups * group) / ((performance.now() - t0) / 1000)
      await Promise.all(stores.map((store) => store.close()))
      const mean = held.reduce((a, b) => a + b, 0) / held.length
      record(
        `group commits of ${group} event(s), ${writers} writer(s): lock held per commit`,
        `${fmt(mean, 2)} ms mean`,
        `p50 ${fmt(percentile(held, 50), 2)} ms, p99 ${fmt(percentile(held, 99), 2)} ms;` +
          ` ${fmt(rate)} events/s; ceiling 1000 / mean x ${group} = ${fmt((1000 / mean) * group)} events/s`,
      )
    }
  }
}

/** A process's resident set in MB, from Linux's /proc (NaN elsewhere). */
function residentMegabytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb === undefined ? Number.NaN : Number(kb) / 1024
  } catch {
    return Number.NaN
  }
}

/** autocannon from a worker thread, as bench/run.ts does: the load generator gets a thread of its own. */
function load(options: autocannon.Options): Promise<autocannon.Result> {
  return autocannon({connections: 50, duration: SECONDS, workers: 1, ...options})
}

/** Single events over HTTP at 50 connections: the parse-only Koa ceiling, one serve, two serve. */
async function httpRows(url: string): Promise<void> {
  const body = JSON.stringify(syntheticEvent(1, 'http'))
  const post = (target: string, connections = 50) =>
    load({url: target, connections, method: 'POST', headers: {'content-type': 'application/json'}, body})
  const bare = new Koa()
  bare.use(koaBody({jsonLimit: '1mb'}))
  bare.use((ctx) => {
    ctx.status = 201
    ctx.body = {ok: true}
  })
  const bareServer = http.createServer(bare.callback()).listen(0, '127.0.0.1')
  await once(bareServer, 'listening')
  const ceiling = (await post(`http://127.0.0.1:${(bareServer.address() as {port: number}).port}/`)).requests.average
  bareServer.close()
  record('ceiling: parse-only Koa endpoint, 50 conns', `${fmt(ceiling)} req/s`)
  let one = 0
  for (const processes of [1, 2]) {
    const servers = await Promise.all(Array.from({length: processes}, () => serve(url)))
    try {
      // serve verifies every chain once after start-up, in the background (src/server/start.ts);
      // GET /v1/stats waits for that. The load starts after it, on a process at rest.
      const t0 = performance.now()
      await Promise.all(servers.map(async (server) => (await fetch(`${server.url}/v1/stats`)).arrayBuffer()))
      if (processes === 1) {
        record(
          `serve: every chain verified in the background after start-up`,
          `${fmt((performance.now() - t0) / 1000, 1)} s`,
        )
        record('RSS of serve then (its /proc status)', `${fmt(residentMegabytes(servers[0]!.child.pid!))} MB`)
      }
      const results = await Promise.all(servers.map((server) => post(`${server.url}/v1/events`, 50 / processes)))
      if (results.some((r) => r.non2xx > 0)) throw new Error('single ingest: non-2xx answers')
      const rate = results.reduce((sum, r) => sum + r.requests.average, 0)
      if (processes === 1) one = rate
      record(
        `POST /v1/events, 50 conns over ${processes} serve process(es) on one database`,
        `${fmt(rate)} events/s`,
        processes === 1
          ? `${fmt(rate / ceiling, 2)} of parse-only; target >= 0.3 (issue 46)`
          : `${fmt(rate / one, 2)}x one process`,
      )
    } finally {
      await Promise.all(servers.map((server) => server.stop()))
    }
  }
}

console.log(
  `audit-trail PostgreSQL benchmark: ${fmt(EVENTS)} events, ${os.cpus().length} x ${os.cpus()[0]?.model}, node ` +
    `${process.version}\n`,
)
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
  record(
    'batch ingest through the service, batches of 1,000',
    `${fmt(ingestRate)} /s`,
    `${fmt(ingestRate / rawRate, 2)} of raw; target >= 0.5`,
  )
  await services.close()

  // Start-up and RSS in a fresh process on the compiled code, as `audit-trail serve` starts.
  const startup = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', STARTUP], {
      encoding: 'utf8',
      env: {
        ...process.env,
        BENCH_DATABASE_URL: target.url,
        BENCH_AUDIT: path.join(root, 'dist', 'services', 'audit.js'),
      },
    }),
  ) as {ms: number; rss: number; size: number}
  if (startup.size !== EVENTS) throw new Error(`start-up read ${startup.size} events`)
  record(
    `start-up on ${fmt(EVENTS)} events (fresh process, dist/)`,
    `${fmt(startup.ms / 1000, 2)} s`,
    'target < 2 s at 1M',
  )
  record('RSS after start-up (same process)', `${fmt(startup.rss / 2 ** 20)} MB`, 'target < 300 MB at 1M')
  services = await openAudit({dataDir: os.tmpdir(), databaseUrl: target.url})

  // The same events in a data directory, for the read rows' comparison.
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrail-bench-'))
  const embedded = await openAudit({dataDir})
  try {
    for (let i = 0; i < EVENTS; i += BATCH) {
      const bodies = Array.from({length: Math.min(BATCH, EVENTS - i)}, (_, j) => syntheticEvent(i + j))
      if ((await embedded.ingest.recordBatch(bodies)).status !== 201) throw new Error('ingest failed')
    }
    await embedded.query.stats()
    await readRows(services, embedded)
  } finally {
    await embedded.close()
    await rm(dataDir, {recursive: true, force: true})
  }

  const verifyCeiling = await oneThreadCeiling(services.store)
  const v0 = performance.now()
  const verified = await services.integrity.verifyAll()
  if (!verified.valid) throw new Error('chains do not verify')
  const verifyRate = EVENTS / ((performance.now() - v0) / 1000)
  record(
    'chain verification of all events',
    `${fmt(verifyRate)} /s`,
    `target >= 1.5x the one-thread ceiling; ${besideCeiling(verifyRate, verifyCeiling)}`,
  )
  // The payload of the first 100,000 events (a time window: syntheticEvent's are 250 ms apart) erased.
  const window = Math.min(100_000, EVENTS)
  const since = syntheticEvent(0).timestamp as string
  const until = new Date(Date.parse(since) + window * 250).toISOString()
  const e0 = performance.now()
  const erased = await services.erasure.erase({filter: {since, until}, reason: 'benchmark'})
  record(
    `erasure of ${fmt(erased.erased_events)} events' payload in a log of ${fmt(EVENTS)} (rows, VACUUM)`,
    `${fmt((performance.now() - e0) / 1000, 2)} s`,
    'target < 30 s (100k of 1M)',
  )
  await services.close()

  await lockHoldTimes(target.url)
  await httpRows(target.url)
} finally {
  await target.drop()
  await ceiling.drop()
}
// In databases of their own: the order of the workload, a young table against a grown one.
await workloadOrderRows({
  seconds: Number(option('--order-seconds') ?? 0) || 10,
  rounds: 4,
  runs: Number(option('--order-runs') ?? 0) || 3,
})
