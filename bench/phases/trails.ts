/**
 * Trails (issue 40, docs/trails.md): on PostgreSQL, single events at 50 connections into four
 * trails at once against one trail, in the same run (each trail has its own sequencer lock, so
 * four should append in parallel; target 1.6x); on a data directory, ingest into `default` with
 * ten other trails open against alone (target: under 5 % slower); and the RSS of an idle open trail.
 */
import {once} from 'node:events'
import http from 'node:http'
import {mkdir} from 'node:fs/promises'
import path from 'node:path'
import {createTrailsApp} from '../../src/server/trails-app.js'
import {openTrails} from '../../src/services/trail-registry.js'
import {syntheticEvent} from '../events.js'
import {argv, fmt, load, record, rss} from '../common.js'
import {createDatabase, serve} from '../postgres-support.js'

/** `--trail-seconds N`: how long each load runs (default 8 s, as every other row). */
const SECONDS = Number(argv[argv.indexOf('--trail-seconds') + 1] ?? 0) || 8
const OTHER_TRAILS = 10
const BODY = JSON.stringify(syntheticEvent(1))

/** Events per second POSTed at `paths` at once, `connections` spread over them; each path's own rate too. */
async function rates(url: string, paths: readonly string[], connections = 50): Promise<number[]> {
  const each = Math.max(1, Math.floor(connections / paths.length))
  // Each trail opened and its first append made before the clock runs.
  for (const p of paths) await post(url, p, JSON.parse(BODY))
  const results = await Promise.all(
    paths.map((p) =>
      load({
        url: `${url}${p}`,
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: BODY,
        connections: each,
        duration: SECONDS,
      }),
    ),
  )
  for (const result of results)
    if (result.non2xx > 0) throw new Error(`${result.non2xx} answers were not 2xx at ${result.url}`)
  return results.map((result) => result.requests.average)
}

async function post(url: string, requestPath: string, body: unknown): Promise<void> {
  const response = await fetch(`${url}${requestPath}`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`POST ${requestPath}: ${response.status} ${await response.text()}`)
}

async function postgresRows(): Promise<void> {
  const database = await createDatabase()
  const served = await serve(database.url)
  try {
    const names = ['t1', 't2', 't3', 't4']
    for (const name of names) await post(served.url, '/v1/trails', {name})
    const [one] = await rates(served.url, ['/v1/trails/t1/events'])
    const four = await rates(
      served.url,
      names.map((name) => `/v1/trails/${name}/events`),
    )
    const sum = four.reduce((a, b) => a + b, 0)
    record({
      what: 'PostgreSQL: POST /v1/events into one trail, 50 conns, one serve process',
      value: `${fmt(one!)} events/s`,
      target: '-',
      ceiling: '-',
    })
    record({
      what: 'PostgreSQL: POST /v1/events into four trails at once, 50 conns in all, same process',
      value: `${fmt(sum)} events/s = ${fmt(sum / one!, 2)}x one trail`,
      target: '>= 1.6x one trail',
      ceiling: `each trail: ${four.map((rate) => fmt(rate)).join(', ')} events/s`,
    })
  } finally {
    await served.stop()
    await database.drop()
  }
}

/** Single events into `default` of a fresh data directory with `others` more trails open; events/s. */
async function dataDirRate(dir: string, others: number): Promise<number> {
  await mkdir(dir, {recursive: true})
  const trails = await openTrails({dataDir: dir})
  try {
    for (let i = 0; i < others; i++) {
      await trails.create(`idle-${i}`)
      await trails.open(`idle-${i}`)
    }
    const server = http.createServer(createTrailsApp(trails, {logError: () => {}}).callback())
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
    const [rate] = await rates(url, ['/v1/events'])
    server.close()
    return rate!
  } finally {
    await trails.close()
  }
}

/** Trails opened to measure the RSS of one: enough that the growth stands out of the noise of a GC. */
const RSS_TRAILS = 50

/** The RSS an idle open trail adds (empty, after GC), from RSS_TRAILS of them. */
async function idleTrailRss(dir: string): Promise<number> {
  await mkdir(dir, {recursive: true})
  const trails = await openTrails({dataDir: dir})
  try {
    await trails.create('warm-up')
    await trails.open('warm-up')
    globalThis.gc?.()
    const before = rss()
    for (let i = 0; i < RSS_TRAILS; i++) await trails.open((await trails.create(`idle-${i}`)).name)
    globalThis.gc?.()
    return (rss() - before) / RSS_TRAILS
  } finally {
    await trails.close()
  }
}

export async function trailsPhase(dir: string): Promise<void> {
  await postgresRows()
  // Alone before and after, so that the process warming up does not favour either side.
  const first = await dataDirRate(path.join(dir, 'alone'), 0)
  const crowded = await dataDirRate(path.join(dir, 'crowded'), OTHER_TRAILS)
  const alone = (first + (await dataDirRate(path.join(dir, 'alone-again'), 0))) / 2
  record({
    what: `data directory: POST /v1/events into default with ${OTHER_TRAILS} other trails open, 50 conns`,
    value: `${fmt(crowded)} events/s, ${fmt((1 - crowded / alone) * 100, 1)} % slower`,
    target: '< 5 % slower than alone',
    ceiling: `alone: ${fmt(alone)} events/s (mean of a run before and one after)`,
  })
  record({
    what: `RSS of an idle open trail (data directory, empty, after GC; ${RSS_TRAILS} opened)`,
    value: `${fmt((await idleTrailRss(path.join(dir, 'idle'))) / 2 ** 20, 2)} MB`,
    target: 'report',
    ceiling: '-',
  })
}
