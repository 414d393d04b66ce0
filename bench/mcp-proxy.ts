/**
 * The MCP proxy's cost (issue 33): round-trip latency of `tools/call` through `audit-trail
 * mcp-proxy --server URL` against a direct stdio connection to the same server in the same run,
 * taken in alternation, and calls per second through one proxy. The server is server-everything's
 * `echo`; the log is the real service on loopback, recording asynchronously.
 *
 * Standalone: `npm run build && node --import tsx bench/mcp-proxy.ts [--calls 2000]` (its own
 * service on a temporary data directory); `npm run bench` runs it as the phase `mcp`.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import http from 'node:http'
import {once} from 'node:events'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import {createApp} from '../src/server/app.js'
import {openAudit, type AuditServices} from '../src/services/audit.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const everything = path.join(root, 'node_modules', '.bin', 'mcp-server-everything')

export interface McpRow {
  what: string
  value: string
  target: string
  ceiling?: string
}

async function connect(proxyFlags: string[] | undefined): Promise<Client> {
  const transport = proxyFlags
    ? new StdioClientTransport({
        command: process.execPath,
        args: [path.join(root, 'bin', 'run.js'), 'mcp-proxy', ...proxyFlags, '--', everything, 'stdio'],
        stderr: 'ignore',
      })
    : new StdioClientTransport({command: everything, args: ['stdio'], stderr: 'ignore'})
  const client = new Client({name: 'bench-agent', version: '1'})
  await client.connect(transport)
  return client
}

const call = (client: Client, i: number) => client.callTool({name: 'echo', arguments: {message: `call ${i}`}})

/** `calls` sequential round trips, in ms each. */
async function roundTrips(client: Client, calls: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now()
    await call(client, i)
    times.push(performance.now() - t0)
  }
  return times
}

/** Calls per second with `inFlight` calls outstanding at a time. */
async function throughput(client: Client, calls: number, inFlight: number): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({length: inFlight}, async () => {
      while (next < calls) await call(client, next++)
    }),
  )
  return calls / ((performance.now() - t0) / 1000)
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const ms = (n: number) => n.toFixed(3)

/** Measures with the log at `logUrl` (whose store is `services`, to count what it recorded). */
export async function mcpProxyRows(services: AuditServices, logUrl: string, calls: number): Promise<McpRow[]> {
  const state = await mkdtemp(path.join(os.tmpdir(), 'atrail-bench-mcp-'))
  const before = (await services.query.stats()).total_events
  const direct = await connect(undefined)
  const proxied = await connect(['--server', logUrl, '--state-dir', state])
  try {
    await roundTrips(direct, 50)
    await roundTrips(proxied, 50)
    // Alternating rounds, so that both see the same machine.
    const directTimes: number[] = []
    const proxyTimes: number[] = []
    for (let round = 0; round < 10; round++) {
      directTimes.push(...(await roundTrips(direct, Math.ceil(calls / 10))))
      proxyTimes.push(...(await roundTrips(proxied, Math.ceil(calls / 10))))
    }
    directTimes.sort((a, b) => a - b)
    proxyTimes.sort((a, b) => a - b)
    const directRate = await throughput(direct, calls, 16)
    const proxyRate = await throughput(proxied, calls, 16)
    const overhead = quantile(proxyTimes, 0.5) - quantile(directTimes, 0.5)
    return [
      {
        what: `MCP tools/call round trip over stdio, direct (server-everything echo, ${proxyTimes.length} calls)`,
        value: `p50 ${ms(quantile(directTimes, 0.5))} ms, p99 ${ms(quantile(directTimes, 0.99))} ms`,
        target: '-',
      },
      {
        what: 'MCP tools/call round trip through mcp-proxy --server (loopback), same server, alternating',
        value: `p50 ${ms(quantile(proxyTimes, 0.5))} ms, p99 ${ms(quantile(proxyTimes, 0.99))} ms`,
        target: 'p50 overhead < 1 ms',
        ceiling: `p50 overhead ${ms(overhead)} ms`,
      },
      {
        what: 'MCP tools/call through one mcp-proxy, 16 in flight',
        value: `${Math.round(proxyRate)} calls/s`,
        target: '-',
        ceiling: `direct: ${Math.round(directRate)} calls/s`,
      },
    ]
  } finally {
    await direct.close()
    await proxied.close()
    await rm(state, {recursive: true, force: true})
    const recorded = (await services.query.stats()).total_events - before
    // initialize, the warm-up, the rounds and the throughput run: each call one event, none lost.
    const expected = 1 + 50 + 10 * Math.ceil(calls / 10) + calls
    if (recorded !== expected) console.error(`mcp-proxy recorded ${recorded} events, expected ${expected}`)
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2)
  const calls = Number(argv[argv.indexOf('--calls') + 1] ?? 0) || 2000
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-bench-'))
  const services = await openAudit({dataDir: dir})
  const server = http.createServer(createApp(services, {logError: () => {}}).callback())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  try {
    const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
    for (const row of await mcpProxyRows(services, url, calls))
      console.log(`${row.what.padEnd(90)} ${row.value.padStart(28)}   ${row.ceiling ?? ''}`)
  } finally {
    server.close()
    await services.close()
    await rm(dir, {recursive: true, force: true})
  }
}
