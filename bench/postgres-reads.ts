/**
 * The read rows of `npm run bench -- --store postgres` (issue 34): GET /v1/events by agent and search
 * with words of three selectivities, on PostgreSQL beside a data directory holding the same events,
 * in the same run. Requests one at a time, each store in turn, so that both see the same machine.
 */
import type {AuditServices} from '../src/services/audit.js'
import {fmt, percentile, record} from './postgres-support.js'

const REQUESTS = 200

interface Read {
  what: string
  target: string
  /** The i-th request of the row. */
  run(services: AuditServices, i: number): Promise<unknown>
}

/** `input.query` of bench/events.ts holds p<i mod 10>, q<i mod 100>, r<i mod 10000>: 10 %, 1 %, 0.01 %. */
const search = (q: (i: number) => string) => (services: AuditServices, i: number) =>
  services.query.search({q: q(i), limit: '20'})

const READS: Read[] = [
  {
    what: 'GET /v1/events by agent (limit 50)',
    target: '<= 1.5x',
    run: (services, i) =>
      services.query.listEvents({agent_id: `agent-${i % 50}`, limit: '50', offset: String((i * 7) % 100)}),
  },
  {
    what: 'search, a phrase in 0.1 % (customer-N, limit 20)',
    target: '<= 1.5x',
    run: search((i) => `customer-${i % 1000}`),
  },
  {what: 'search, a word in 10 % (limit 20)', target: '<= 1.5x', run: search((i) => `p${i % 10}`)},
  {what: 'search, a word in 1 % (limit 20)', target: '<= 1.5x', run: search((i) => `q${(i * 7) % 100}`)},
  {what: 'search, a word in 0.01 % (limit 20)', target: '<= 1.5x', run: search((i) => `r${(i * 37) % 10_000}`)},
]

async function latencies(services: AuditServices, read: Read, i0: number): Promise<number[]> {
  const ms: number[] = []
  for (let i = i0; i < i0 + REQUESTS; i++) {
    const t0 = performance.now()
    await read.run(services, i)
    ms.push(performance.now() - t0)
  }
  return ms
}

export async function readRows(postgres: AuditServices, dataDir: AuditServices): Promise<void> {
  for (const read of READS) {
    // A first round on each store warms what a serving process would have warm; the second is measured.
    await latencies(postgres, read, 0)
    await latencies(dataDir, read, 0)
    const onPostgres = await latencies(postgres, read, REQUESTS)
    const onDataDir = await latencies(dataDir, read, REQUESTS)
    const p99 = percentile(onPostgres, 99)
    record(
      `${read.what}: PostgreSQL p50 / p99`,
      `${fmt(percentile(onPostgres, 50), 1)} / ${fmt(p99, 1)} ms`,
      `data directory ${fmt(percentile(onDataDir, 50), 1)} / ${fmt(percentile(onDataDir, 99), 1)} ms; ` +
        `p99 ${fmt(p99 / percentile(onDataDir, 99), 2)}x; target ${read.target}`,
    )
  }
}
