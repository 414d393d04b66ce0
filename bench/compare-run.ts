/**
 * One run of bench/compare.ts in a process of its own: the checkout at argv[2] ingests N synthetic
 * events (batches of 1,000 through the ingest service) into a new data directory or PostgreSQL
 * database, then pages GET /v1/events by agent, scans every event and every header, and verifies
 * every chain. Prints one JSON line of rates and times.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

const [root, store, count] = process.argv.slice(2) as [string, 'sqljs' | 'postgres', string]
const EVENTS = Number(count)
const {openAudit} = await import(path.join(root, 'src/services/audit.ts'))
const {syntheticEvent} = await import(path.join(root, 'bench/events.ts'))
const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-compare-'))
const database =
  store === 'postgres' ? await (await import(path.join(root, 'bench/postgres-support.ts'))).createDatabase() : undefined
const rate = (n: number, since: number) => Math.round(n / ((performance.now() - since) / 1000))
try {
  const services = await openAudit({dataDir: dir, databaseUrl: database?.url})
  let t = performance.now()
  for (let i = 0; i < EVENTS; i += 1000) {
    const batch = Array.from({length: Math.min(1000, EVENTS - i)}, (_, k) => syntheticEvent(i + k))
    await services.ingest.recordBatch(batch)
  }
  const ingest = rate(EVENTS, t)
  const times: number[] = []
  for (let i = 0; i < 400; i++) {
    const start = performance.now()
    const params = {agent_id: `agent-${i % 50}`, limit: '50', offset: String((i * 7) % 200)}
    await services.query.listEvents(params)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  t = performance.now()
  let scanned = 0
  for await (const event of services.store.scanEvents()) if (event) scanned++
  const scan = rate(scanned, t)
  t = performance.now()
  let headers = 0
  for await (const batch of services.store.scanEventHeaders()) headers += batch.length
  const headerScan = rate(headers, t)
  t = performance.now()
  const verdict = await services.integrity.verifyAll()
  const verify = rate(EVENTS, t)
  await services.close()
  if (!verdict.valid || scanned !== EVENTS || headers !== EVENTS)
    throw new Error('the run did not read back its events')
  const p50 = times[Math.floor(times.length / 2)]!
  const p99 = times[Math.floor(times.length * 0.99)]!
  console.log(JSON.stringify({ingest, queryP50: p50, queryP99: p99, scan, headerScan, verify}))
} finally {
  await database?.drop()
  await rm(dir, {recursive: true, force: true})
}
