/** What the benchmark phases share: the arguments, the rows of the report and timing helpers. */
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import autocannon from 'autocannon'

export const argv = process.argv.slice(2)
export const EVENTS = Number(argv[argv.indexOf('--events') + 1] ?? 0) || 100_000
export const HTTP = !argv.includes('--no-http')
export const CEILING_SAMPLE = Math.min(EVENTS, 100_000)
export const SHARDS = Math.max(1, Math.round(EVENTS / 100_000))
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export interface Row {
  what: string
  value: string
  target: string
  ceiling?: string
}
export const rows: Row[] = []
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits})
export const seconds = (ms: number) => `${fmt(ms / 1000, 2)} s`
export const rss = () => process.memoryUsage().rss
export const peakRssMb = () => process.resourceUsage().maxRSS / 1024
export function record(row: Row) {
  rows.push(row)
  console.log(
    `${row.what.padEnd(58)} ${row.value.padStart(18)}   target ${row.target}` +
      `${row.ceiling ? `   (${row.ceiling})` : ''}`,
  )
}
export function timed<T>(work: () => T): [T, number] {
  const t0 = performance.now()
  const value = work()
  return [value, performance.now() - t0]
}
export async function timedAsync<T>(work: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now()
  const value = await work()
  return [value, performance.now() - t0]
}

/**
 * autocannon at 50 connections for 8 s, from a worker thread: the load generator gets a thread of
 * its own, as a client on another machine would, instead of taking turns with the server on its
 * event loop (which it did before 2026-11-22, and which took a third to a half of the server's
 * thread at these rates). The machine's two cores are still shared by both.
 */
export function load(options: autocannon.Options): Promise<autocannon.Result> {
  return autocannon({connections: 50, duration: 8, workers: 1, ...options})
}

/** Latency of `requestPath`, or with `setupRequest` (a module path) of a new path per request. */
export async function latency(
  url: string,
  requestPath: string,
  setupRequest?: string,
): Promise<{p50: number; p99: number; rps: number}> {
  const result = await load({
    url: `${url}${requestPath}`,
    ...(setupRequest ? {requests: [{setupRequest} as unknown as autocannon.Request]} : {}),
  })
  return {p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average}
}
