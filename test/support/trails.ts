/**
 * Tests of the HTTP server on several trails: `openTrailsOn` opens the service's trails on a data
 * directory (or a database), and `startTrailTestApi` serves `createTrailsApp` with the TestApi of
 * harness.ts, its `request` sending every path through one trail's prefix (`/v1/...` as
 * `/v1/trails/NAME/...`, `/tlog/...` as `/tlog/NAME/...`, `/entries` as `/v1/trails/NAME/entries`),
 * so that a suite written for one log runs unchanged on a second trail.
 */
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {createTrailsApp, type TrailsAppOptions} from '../../src/server/trails-app.js'
import type {AuditOptions} from '../../src/services/audit.js'
import {openTrails} from '../../src/services/trail-registry.js'
import type {Trails} from '../../src/services/trails.js'
import {removeDir, startTestApi, tempDir, type HttpResponse, type TestApi} from './harness.js'
import {createTestDatabase, type StoreKind} from './stores.js'

/** The path `path` (of one log) has on trail `trail`; unchanged for `default` when `trail` is undefined. */
export function onTrail(trail: string | undefined, path: string): string {
  if (trail === undefined) return path
  if (path.startsWith('/v1/')) return `/v1/trails/${trail}/${path.slice('/v1/'.length)}`
  if (path.startsWith('/tlog/')) return `/tlog/${trail}/${path.slice('/tlog/'.length)}`
  if (path === '/entries' || path.startsWith('/entries/') || path.startsWith('/entries?'))
    return `/v1/trails/${trail}${path}`
  return path
}

/** The trail each API of startTrailTestApi sends its requests to. */
const trailOfApi = new WeakMap<TestApi, string | undefined>()

/** The URL of `path` (of one log) on the trail `api` serves: for tests that fetch by hand. */
export function urlOf(api: TestApi, path: string): string {
  return `${api.url}${onTrail(trailOfApi.get(api), path)}`
}

export interface TrailTestApi extends TestApi {
  trails: Trails
  /** A request on the unprefixed path, whatever the trail of this API. */
  plain<T = any>(method: string, path: string, options?: Parameters<TestApi['request']>[2]): Promise<HttpResponse<T>>
}

async function fetchJson(url: string, method: string, options: Parameters<TestApi['request']>[2] = {}) {
  const init: RequestInit = {method, headers: {...options.headers}}
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body)
    ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
  } else if (options.raw !== undefined) {
    init.body = options.raw as BodyInit
  }
  const response = await fetch(url, init)
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return {status: response.status, headers: response.headers, body: body as any, text}
}

/**
 * The trails of a fresh data directory (or database) with `trail` created in it, served on
 * 127.0.0.1; `services` are that trail's, and `request` goes to it through its prefix.
 */
export async function startTrailTestApi(
  options: {trail?: string; app?: TrailsAppOptions; audit?: Partial<AuditOptions>; store?: StoreKind} = {},
): Promise<TrailTestApi> {
  const dataDir = await tempDir()
  const database = options.store === 'postgres' ? await createTestDatabase() : undefined
  const trails = await openTrails({dataDir, databaseUrl: database?.url, ...options.audit})
  const trail = options.trail
  if (trail !== undefined) await trails.create(trail)
  const services = trail === undefined ? trails.default : await trails.open(trail)
  const logged: unknown[] = []
  const app = createTrailsApp(trails, {logError: (error) => logged.push(error), ...options.app})
  const server = http.createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const api: TrailTestApi = {
    trails,
    services,
    dataDir,
    url,
    logged,
    request: (method, path, init) => fetchJson(`${url}${onTrail(trail, path)}`, method, init),
    plain: (method, path, init) => fetchJson(`${url}${path}`, method, init),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await trails.close()
      await database?.drop()
      await removeDir(dataDir)
    },
  }
  trailOfApi.set(api, trail)
  return api
}

/** The trails a conformance-style suite runs on: the default one, then a second through the prefixed routes. */
export const SUITE_TRAILS: ReadonlyArray<string | undefined> = [undefined, 'second']

/**
 * `describe(title, body)` once per trail of SUITE_TRAILS, the second time with the trail in the
 * title (docs/testing.md, "Trails"); `body` starts its API with `startApiOn(trail, ...)`.
 */
export function describeOnTrails(title: string, body: (this: Mocha.Suite, trail: string | undefined) => void): void {
  for (const trail of SUITE_TRAILS) {
    describe(trail === undefined ? title : `${title} [trail ${trail}]`, function () {
      body.call(this, trail)
    })
  }
}

/** `startTestApi` for the default trail of a plain app; `startTrailTestApi` with the trail created otherwise. */
export function startApiOn(
  trail: string | undefined,
  options: {app?: TrailsAppOptions; audit?: Partial<AuditOptions>; store?: StoreKind} = {},
): Promise<TestApi> {
  return trail === undefined ? startTestApi(options) : startTrailTestApi({...options, trail})
}
