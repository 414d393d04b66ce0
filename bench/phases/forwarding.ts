/**
 * Forwarding (issue 45, docs/forwarding.md): events per second forwarded to a local receiver of
 * each kind (syslog over TCP, OTLP/HTTP, webhook) beside the batch ingest rate of the same run,
 * and the lag p99 (recorded_at to arrival) of a webhook at a steady 1,000 events/s.
 * Run alone: `npm run bench -- --phases forwarding`.
 */
import http from 'node:http'
import net from 'node:net'
import {once} from 'node:events'
import path from 'node:path'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {ForwardingService, parseDestination} from '../../src/services/forwarding/index.js'
import {decodeProtobufLogsExport} from '../../src/services/otlp/protobuf.js'
import {syntheticEvent} from '../events.js'
import {fmt, type BenchRow} from '../rows.js'

interface Receiver {
  url: string
  /** Arrival time (ms) of each event received, by index. */
  arrivals: Map<number, number>
  close(): void
}

async function listening(server: net.Server): Promise<number> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as net.AddressInfo).port
}

async function httpReceiver(kind: 'webhook' | 'otlp'): Promise<Receiver> {
  const arrivals = new Map<number, number>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const now = Date.now()
      if (kind === 'webhook') {
        for (const line of body.toString().split('\n')) if (line) arrivals.set(JSON.parse(line).index, now)
      } else {
        const request = decodeProtobufLogsExport(body) as any
        for (const record of request.resourceLogs[0].scopeLogs[0].logRecords)
          arrivals.set(JSON.parse(record.body.stringValue).index, now)
      }
      res.end()
    })
  })
  const port = await listening(server)
  const url = kind === 'webhook' ? `http://127.0.0.1:${port}/hook` : `otlp+http://127.0.0.1:${port}/v1/logs`
  return {url, arrivals, close: () => server.close()}
}

/** Reads RFC 6587 octet-counted frames; the index from each message's structured data. */
async function syslogReceiver(): Promise<Receiver> {
  const arrivals = new Map<number, number>()
  const server = net.createServer((socket) => {
    let buffer = Buffer.alloc(0)
    socket.on('data', (data: Buffer) => {
      buffer = Buffer.concat([buffer, data])
      for (;;) {
        const space = buffer.indexOf(0x20)
        if (space < 0) break
        const length = Number(buffer.subarray(0, space).toString())
        if (buffer.length < space + 1 + length) break
        const message = buffer.subarray(space + 1, space + 1 + length).toString()
        arrivals.set(Number(/ index="(\d+)"/.exec(message)![1]), Date.now())
        buffer = buffer.subarray(space + 1 + length)
      }
    })
  })
  return {url: `syslog+tcp://127.0.0.1:${await listening(server)}`, arrivals, close: () => server.close()}
}

async function ingest(services: AuditServices, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 1000)
    await services.ingest.recordBatch(
      Array.from({length: Math.min(1000, from + count - i)}, (_, k) => syntheticEvent(i + k)),
    )
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5))
}

function forward(services: AuditServices, url: string): ForwardingService {
  const forwarding = new ForwardingService({
    store: services.store,
    feed: services.feed,
    destinations: [parseDestination(url)],
  })
  forwarding.start()
  return forwarding
}

/** Catch-up rate of each kind over `events` events, beside their ingest rate. */
async function throughputRows(dir: string, events: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  for (const kind of ['syslog', 'otlp', 'webhook'] as const) {
    const services = await openAudit({dataDir: path.join(dir, kind)})
    const receiver = kind === 'syslog' ? await syslogReceiver() : await httpReceiver(kind)
    const ingestStart = performance.now()
    await ingest(services, 0, events)
    const ingestRate = events / ((performance.now() - ingestStart) / 1000)
    const start = performance.now()
    const forwarding = forward(services, receiver.url)
    await until(() => receiver.arrivals.size >= events)
    const rate = events / ((performance.now() - start) / 1000)
    await forwarding.close()
    receiver.close()
    await services.close()
    rows.push({
      what: `forwarding to ${kind}, ${fmt(events)} events (events/s)`,
      value: fmt(rate),
      target: 'keeps up with batch ingest',
      ceiling: `batch ingest ${fmt(ingestRate)} events/s`,
    })
  }
  return rows
}

/** The lag p99 of a webhook while events come at a steady 1,000 a second (10 per 10 ms), for 10 s. */
async function lagRow(dir: string): Promise<BenchRow> {
  const services = await openAudit({dataDir: path.join(dir, 'steady')})
  const receiver = await httpReceiver('webhook')
  const forwarding = forward(services, receiver.url)
  const recordedAt = new Map<number, number>()
  const start = Date.now()
  for (let tick = 0; tick < 1000; tick++) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + tick * 10 - Date.now())))
    const batch = Array.from({length: 10}, (_, k) => syntheticEvent(tick * 10 + k))
    for (const result of (await services.ingest.recordBatch(batch)).results)
      if ('event' in result) recordedAt.set(result.event.index, Date.parse(result.event.recorded_at))
  }
  await until(() => receiver.arrivals.size >= recordedAt.size)
  const lags = [...recordedAt].map(([index, at]) => receiver.arrivals.get(index)! - at).sort((a, b) => a - b)
  await forwarding.close()
  receiver.close()
  await services.close()
  return {
    what: 'forwarding lag p99 at a steady 1,000 events/s, webhook (ms)',
    value: fmt(lags[Math.floor(lags.length * 0.99)]!),
    target: 'seconds at most',
  }
}

export async function forwardingPhase(dir: string, events: number, record: (row: BenchRow) => void): Promise<void> {
  for (const row of await throughputRows(dir, Math.min(events, 100_000))) record(row)
  record(await lagRow(dir))
}
