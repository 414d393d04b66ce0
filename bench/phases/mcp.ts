import {once} from 'node:events'
import http from 'node:http'
import {createApp} from '../../src/server/app.js'
import type {AuditServices} from '../../src/services/audit.js'
import {mcpProxyRows} from '../mcp-proxy.js'
import {EVENTS, record} from '../common.js'

/** The MCP proxy against a direct connection (bench/mcp-proxy.ts), its events sent to this service. */
export async function mcpPhase(services: AuditServices): Promise<void> {
  const server = http.createServer(createApp(services, {logError: () => {}}).callback())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  try {
    const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
    // 2,000 calls at the default 100,000 events; fewer for a small run.
    const calls = Math.max(20, Math.min(2000, Math.floor(EVENTS / 50)))
    for (const row of await mcpProxyRows(services, url, calls)) record(row)
  } finally {
    server.close()
  }
}
