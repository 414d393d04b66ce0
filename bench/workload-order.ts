/**
 * The workload-order rows of `npm run bench -- --store postgres` (issue 34): batches of 500 events at
 * 8 connections to a `serve` process that first took single events at 50 connections, beside the same
 * batches to a `serve` on a fresh database, in the same run. A state that goes bad after small commits
 * (a plan, statistics) need not go bad every time, so the pair runs several times and every run is shown.
 */
import path from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import {syntheticEvent} from './events.js'
import {createDatabase, fmt, record, root, serve, type Served} from './postgres-support.js'

const BATCH = 500
/** Every event sent with an id of its own (fresh-ids.cjs), so every commit looks its ids up. */
const FRESH_IDS = path.join(root, 'bench', 'fresh-ids.cjs')
const withId = (event: Record<string, unknown>) => ({id: '', ...event})

export interface WorkloadOrderOptions {
  /** Seconds of single events, and of each round of batches (10). */
  seconds: number
  /** Rounds of batches after the single events, and on the fresh database (4). */
  rounds: number
  /** Pairs of runs, each on new databases (3). */
  runs: number
}

interface Round {
  rate: number
  p50: number
}

/** Rounds of batches of 500 at 8 connections; the rate counts events of 201 answers only. */
async function batchRounds(server: Served, options: WorkloadOrderOptions, offset: number): Promise<Round[]> {
  const body = JSON.stringify(Array.from({length: BATCH}, (_, i) => withId(syntheticEvent(offset + i))))
  const rounds: Round[] = []
  for (let r = 0; r < options.rounds; r++) {
    const result = await autocannon({
      url: `${server.url}/v1/batch`,
      method: 'POST',
      headers: {'content-type': 'application/json'},
      requests: [{body, setupRequest: FRESH_IDS} as unknown as autocannon.Request],
      connections: 8,
      duration: options.seconds,
      workers: 1,
    })
    if (result.non2xx > 0) throw new Error(`batches: ${result.non2xx} answers were not 2xx`)
    rounds.push({rate: (result['2xx'] * BATCH) / options.seconds, p50: result.latency.p50})
  }
  return rounds
}

/**
 * Rows of `events`, whether the server has analysed it yet (the planner's statistics), and the rows
 * read from it: a serving process that reads back what it wrote shows there.
 */
async function tableState(url: string): Promise<string> {
  const client = new pg.Client({connectionString: url})
  await client.connect()
  try {
    const {rows} = await client.query<{rows: string; analysed: boolean; fetched: string; scanned: string}>(
      `SELECT n_live_tup AS rows, coalesce(last_analyze, last_autoanalyze) IS NOT NULL AS analysed,
       coalesce(idx_tup_fetch, 0) AS fetched, seq_tup_read AS scanned
       FROM pg_stat_user_tables WHERE relname = 'events'`,
    )
    const row = rows[0]!
    return (
      `events: ${fmt(Number(row.rows))} rows, ${row.analysed ? 'analysed' : 'never analysed'}, ` +
      `${fmt(Number(row.fetched))} read by index, ${fmt(Number(row.scanned))} by scan`
    )
  } finally {
    await client.end()
  }
}

async function onNewDatabase<T>(work: (server: Served, url: string) => Promise<T>): Promise<T> {
  const database = await createDatabase()
  try {
    const server = await serve(database.url)
    try {
      return await work(server, database.url)
    } finally {
      await server.stop()
    }
  } finally {
    await database.drop()
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const shown = (rounds: Round[]) => rounds.map((r) => `${fmt(r.rate)}/s p50 ${fmt(r.p50)} ms`).join(', ')

export async function workloadOrderRows(options: WorkloadOrderOptions): Promise<void> {
  const ratios: number[] = []
  for (let run = 1; run <= options.runs; run++) {
    const singleBody = JSON.stringify(withId(syntheticEvent(1, 'single')))
    const after = await onNewDatabase(async (server, url) => {
      const single = await autocannon({
        url: `${server.url}/v1/events`,
        method: 'POST',
        headers: {'content-type': 'application/json'},
        requests: [{body: singleBody, setupRequest: FRESH_IDS} as unknown as autocannon.Request],
        connections: 50,
        duration: options.seconds,
        workers: 1,
      })
      if (single.non2xx > 0) throw new Error(`single events: ${single.non2xx} answers were not 2xx`)
      const rounds = await batchRounds(server, options, 0)
      return {single: single.requests.average, rounds, state: await tableState(url)}
    })
    const fresh = await onNewDatabase(async (server, url) => ({
      rounds: await batchRounds(server, options, 0),
      state: await tableState(url),
    }))
    const ratio = median(after.rounds.map((r) => r.rate)) / median(fresh.rounds.map((r) => r.rate))
    ratios.push(ratio)
    record(
      `run ${run}: batches x${BATCH}, 8 conns, after ${options.seconds} s of single events`,
      `${fmt(ratio, 2)} of fresh`,
      `single events ${fmt(after.single)}/s; then ${shown(after.rounds)}; ${after.state}`,
    )
    record(
      `run ${run}: the same batches on a fresh database`,
      `${fmt(median(fresh.rounds.map((r) => r.rate)))} /s`,
      `${shown(fresh.rounds)}; ${fresh.state}`,
    )
  }
  record(
    `batches after single events / on a fresh database, ${options.runs} runs`,
    `${fmt(Math.min(...ratios), 2)}..${fmt(Math.max(...ratios), 2)}`,
    'target >= 0.9 in every run',
  )
}
