/**
 * What the embedded store costs over one large ingest through HTTP (bench/store-limits.ts prints
 * it, bench/run.ts adds it to its table): peak RSS of the serving process, the longest event-loop
 * stall, bytes per event on disk, and the time to open the data directory again. The server runs
 * in a child process of its own (bench/store-runner.mjs, which loads the checkout's dist/); traffic
 * goes only to 127.0.0.1.
 */
import {fork, type ChildProcess} from 'node:child_process'
import {once} from 'node:events'
import {mkdtemp, readdir, rm, stat} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {syntheticEvent} from './events.js'

const BATCH = 1000
const CONNECTIONS = 4
const here = path.dirname(fileURLToPath(import.meta.url))

export interface Figures {
  peakRssMb: number
  maxStallMs: number
  bytesPerEvent: number
  searchBytesPerEvent: number
  reopenS: number
}

type Message = {port?: number; openMs?: number; maxStallMs?: number; peakRssBytes?: number; stopped?: boolean}

interface Runner {
  child: ChildProcess
  port: number
  openMs: number
  next: () => Promise<Message>
}

function start(checkout: string, dataDir: string): Promise<Runner> {
  const stdio = ['ignore', 'inherit', 'inherit', 'ipc'] as const
  const child = fork(path.join(here, 'store-runner.mjs'), [checkout, dataDir], {execArgv: [], stdio: [...stdio]})
  const next = async () => (await once(child, 'message'))[0] as Message
  return next().then((first) => ({child, port: first.port!, openMs: first.openMs!, next}))
}

async function post(port: number, body: string): Promise<void> {
  const headers = {'content-type': 'application/json'}
  const res = await fetch(`http://127.0.0.1:${port}/v1/batch`, {method: 'POST', headers, body})
  if (res.status !== 201) throw new Error(`POST /v1/batch answered ${res.status}: ${(await res.text()).slice(0, 300)}`)
  await res.arrayBuffer()
}

/** The figures of `events` events ingested into a fresh data directory by the built `checkout`. */
export async function measureStore(checkout: string, events: number): Promise<Figures> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrail-bench-store-'))
  try {
    const server = await start(checkout, dataDir)
    let sent = 0
    let done = 0
    const worker = async () => {
      while (sent < events) {
        const from = sent
        sent = Math.min(events, sent + BATCH)
        const batch = Array.from({length: sent - from}, (_, k) => syntheticEvent(from + k, 10))
        await post(server.port, JSON.stringify(batch))
        done += batch.length
        if (done % 100_000 < BATCH) process.stdout.write(`\r  ${checkout}: ${done} events`)
      }
    }
    await Promise.all(Array.from({length: CONNECTIONS}, worker))
    process.stdout.write('\n')
    server.child.send('report')
    const report = await server.next()
    server.child.send('stop')
    const stopped = await server.next()
    await once(server.child, 'exit')
    const size = async (name: string) => (await stat(path.join(dataDir, name)).catch(() => ({size: 0}))).size
    const journals = (await readdir(dataDir)).filter((name) => name.startsWith('journal-'))
    let journalBytes = 0
    for (const name of journals) journalBytes += await size(name)
    const reopened = await start(checkout, dataDir)
    reopened.child.send('stop')
    await reopened.next()
    await once(reopened.child, 'exit')
    return {
      peakRssMb: Math.max(report.peakRssBytes!, stopped.peakRssBytes!) / 1024 ** 2,
      maxStallMs: report.maxStallMs!,
      bytesPerEvent: ((await size('events.sqlite')) + journalBytes) / events,
      searchBytesPerEvent: (await size('search.sqlite')) / events,
      reopenS: reopened.openMs / 1000,
    }
  } finally {
    await rm(dataDir, {recursive: true, force: true})
  }
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits})
/** The table's rows: what is measured at `events` events, and its value. */
export const storeRows = (events: number): Array<[string, (f: Figures) => string]> => [
  [`peak RSS of the server over a ${fmt(events)}-event ingest`, (f) => `${fmt(f.peakRssMb)} MB`],
  ['longest event-loop stall during the ingest', (f) => `${fmt(f.maxStallMs)} ms`],
  ['bytes per event on disk (events.sqlite and journals)', (f) => fmt(f.bytesPerEvent)],
  ['bytes per event of the search index (search.sqlite)', (f) => fmt(f.searchBytesPerEvent)],
  [`time to open the data directory again at ${fmt(events)}`, (f) => `${fmt(f.reopenS, 2)} s`],
]
