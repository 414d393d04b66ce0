/**
 * Test harness: temporary data directories, services opened on them, and in-process HTTP against
 * `app.callback()` on an ephemeral loopback port (what supertest does, without the dependency).
 */
import http from 'node:http'
import {mkdtemp, rm} from 'node:fs/promises'
import type {AddressInfo} from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {createApp, type AppOptions} from '../../src/server/app.js'
import {startService, type RunningService} from '../../src/server/start.js'
import {openAudit, type AuditOptions, type AuditServices} from '../../src/services/audit.js'
import {handle, hooksFor, opened, type Per} from './hooks.js'
import {createTestDatabase, useStore, type StoreKind, type StorePlace} from './stores.js'

export async function tempDir(prefix = 'atrail-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix))
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, {recursive: true, force: true})
}

export interface HttpResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface TestApi {
  services: AuditServices
  dataDir: string
  url: string
  /** What the app logged as a server-side failure (its logError), in order. */
  logged: unknown[]
  request<T = any>(
    method: string,
    path: string,
    options?: {body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string>},
  ): Promise<HttpResponse<T>>
  close(): Promise<void>
}

/**
 * Opens services on a fresh data directory (and with `store: 'postgres'` a fresh database, dropped
 * on close) and serves `createApp(services)` on 127.0.0.1.
 */
export async function startTestApi(
  options: {app?: AppOptions; audit?: Partial<AuditOptions>; dataDir?: string; store?: StoreKind} = {},
): Promise<TestApi> {
  const dataDir = options.dataDir ?? (await tempDir())
  const database = options.store === 'postgres' ? await createTestDatabase() : undefined
  const services = await openAudit({dataDir, databaseUrl: database?.url, ...options.audit})
  const logged: unknown[] = []
  const app = createApp(services, {logError: (error) => logged.push(error), ...options.app})
  const server = http.createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    services,
    dataDir,
    url,
    logged,
    async request(method, requestPath, {body, raw, headers} = {}) {
      const init: RequestInit = {method, headers: {...headers}}
      if (body !== undefined) {
        init.body = JSON.stringify(body)
        ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
      } else if (raw !== undefined) {
        init.body = raw as BodyInit
      }
      const response = await fetch(`${url}${requestPath}`, init)
      const text = await response.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {
        // not JSON: keep the text
      }
      return {status: response.status, headers: response.headers, body: parsed as any, text}
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await services.close()
      await database?.drop()
      if (!options.dataDir) await removeDir(dataDir)
    },
  }
}

/** A valid client event with overrides. */
export function makeEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {agent_id: 'agent-1', action_type: 'TOOL_CALL', action_name: 'read_file', ...overrides}
}

/**
 * Audit services on a fresh temporary data directory for each test of the calling `describe`,
 * closed and removed after it. A test may reopen: assign `ctx.services` and it is closed after.
 */
export function servicesPerTest(store: StoreKind = 'sqljs'): {dir: string; services: AuditServices} {
  const place = useStore(store, async () => {
    await ctx.services.close().catch(() => undefined)
  })
  const ctx = {dir: place.dataDir} as {dir: string; services: AuditServices}
  beforeEach(async () => {
    ctx.services = await openAudit({...place})
  })
  return ctx
}

/**
 * `startTestApi(options)` before each test of the calling describe (or once, with `per: 'suite'`),
 * closed after; the handle stands for the one running.
 */
export function useTestApi(options: Parameters<typeof startTestApi>[0] = {}, per: Per = 'test'): TestApi {
  return opened(
    () => startTestApi(options),
    (api) => api.close(),
    per,
  )
}

type ServiceOptions = Parameters<typeof startService>[0]

/**
 * The service `serve` runs (startService) on 127.0.0.1, a free port, and a store of `store` made for
 * each test of the calling describe (or once, with `per: 'suite'`), closed and removed after; the
 * handle stands for the one running, with the data directory and database it runs on.
 */
export function useService(
  options: Partial<ServiceOptions> & {store?: StoreKind} = {},
  per: Per = 'test',
): RunningService & StorePlace {
  const {store, ...rest} = options
  let running: (RunningService & StorePlace) | undefined
  const place = useStore(
    store,
    async () => {
      await running?.close()
      running = undefined
    },
    per,
  )
  const [setUp] = hooksFor(per)
  setUp(async () => {
    const service = await startService({host: '127.0.0.1', port: 0, ...place, ...rest})
    running = Object.assign(service, place)
  })
  return handle(() => running)
}
