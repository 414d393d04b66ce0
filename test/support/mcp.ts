/**
 * Helpers of the MCP proxy's tests: a log that can go away and come back on the same address,
 * and the proxy itself (`bin/run.js mcp-proxy`) between a client and a server.
 */
import {spawnSync} from 'node:child_process'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {createApp} from '../../src/server/app.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import type {StoredEvent} from '../../src/core/types.js'
import {removeDir, tempDir} from './harness.js'

export interface SwitchableLog {
  url: string
  services: AuditServices
  /** Every stored event, index order. */
  events(): Promise<StoredEvent[]>
  /** Stops answering: connections are refused, as of a server that went away. */
  down(): Promise<void>
  /** Answers again on the same address. */
  up(): Promise<void>
  close(): Promise<void>
}

/** The real service (createApp over a fresh data directory) on a loopback port it keeps. */
export async function startSwitchableLog(options: {startDown?: boolean} = {}): Promise<SwitchableLog> {
  const dataDir = await tempDir()
  const services = await openAudit({dataDir})
  const app = createApp(services, {logError: () => undefined})
  let server: http.Server | undefined
  let port = 0
  const up = async () => {
    const listening = http.createServer(app.callback())
    await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve))
    port = (listening.address() as AddressInfo).port
    server = listening
  }
  const down = async () => {
    const closing = server
    server = undefined
    if (!closing) return
    await new Promise<void>((resolve) => {
      closing.close(() => resolve())
      closing.closeAllConnections()
    })
  }
  await up()
  const url = `http://127.0.0.1:${port}`
  if (options.startDown) await down()
  return {
    url,
    services,
    async events() {
      const all: StoredEvent[] = []
      for (let offset = 0; ; offset += 1000) {
        const page = await services.query.listEvents({limit: '1000', offset: String(offset)})
        all.push(...page.events)
        if (page.events.length < 1000) return all
      }
    },
    down,
    up,
    async close() {
      await down()
      await services.close()
      await removeDir(dataDir)
    },
  }
}

/** Polls `check` until it holds or `ms` pass (then it runs once more, to fail with its own message). */
export async function eventually<T>(check: () => Promise<T>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/** The pid of a process that has exited: a queue segment named with it is an orphan. */
export function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {encoding: 'utf8'}).stdout.trim())
}
