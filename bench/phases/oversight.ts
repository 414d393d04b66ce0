/**
 * Human oversight's cost (issue 44, docs/oversight.md): how long a held call takes from the
 * moment its decision is recorded (the answer to `POST /v1/approvals/<id>`) to the client's
 * answer, through `mcp-proxy --server` over stdio to server-everything's `echo`, against the round
 * trip of the same call when no rule holds it. The difference is what holding adds after the
 * decision: the stream's delivery to the proxy and the forwarding (target: p99 under 50 ms).
 * On the data directory, and on PostgreSQL when AUDIT_TRAIL_BENCH_DATABASE_URL names a server
 * (a database of its own is created there and dropped).
 *
 * Alone: `npm run build && node --import tsx bench/run.ts --phases oversight`.
 */
import {randomBytes} from 'node:crypto'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import pg from 'pg'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {startService, type RunningService} from '../../src/server/start.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const everything = path.join(root, 'node_modules', '.bin', 'mcp-server-everything')
const WRITER = 'bench-writer-key-0123456789'
const APPROVER = 'bench-approver-key-0123456789'

export interface OversightRow {
  what: string
  value: string
  target: string
  ceiling?: string
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const ms = (n: number) => n.toFixed(3)

async function connect(logUrl: string, policy: string, state: string): Promise<Client> {
  const flags = ['--server', logUrl, '--api-key', WRITER, '--policy', policy, '--state-dir', state]
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(root, 'bin', 'run.js'), 'mcp-proxy', ...flags, '--', everything, 'stdio'],
    stderr: 'ignore',
  })
  const client = new Client({name: 'bench-agent', version: '1'})
  await client.connect(transport)
  return client
}

/** One held call: from the decision's answer to the client's; the approval is caught on the feed. */
async function heldCall(service: RunningService, client: Client, i: number): Promise<number> {
  const requested = new Promise<string>((resolve) => {
    const seen = (events: Array<{id: string; action_type: string}>) => {
      const request = events.find((e) => e.action_type === 'APPROVAL_REQUESTED')
      if (!request) return
      service.services.feed.off('events', seen)
      resolve(request.id)
    }
    service.services.feed.on('events', seen)
  })
  const call = client.callTool({name: 'echo', arguments: {message: `held ${i}`}})
  const id = await requested
  const response = await fetch(`${service.url}/v1/approvals/${id}`, {
    method: 'POST',
    headers: {authorization: `Bearer ${APPROVER}`, 'content-type': 'application/json'},
    body: JSON.stringify({decision: 'approve'}),
  })
  if (response.status !== 201) throw new Error(`the decision was answered ${response.status}`)
  const decided = performance.now()
  await call
  return performance.now() - decided
}

async function measure(label: string, service: RunningService, dir: string, calls: number) {
  const policy = path.join(dir, 'oversight-policy.json')
  await writeFile(
    policy,
    JSON.stringify({
      policies: [{name: 'hold', type: 'forbidden_action', match: {action_name: 'echo'}, action: 'hold'}],
    }),
  )
  const unheld = path.join(dir, 'no-policy.json')
  await writeFile(unheld, JSON.stringify({policies: []}))
  const held = await connect(service.url, policy, path.join(dir, 'state-held'))
  const plain = await connect(service.url, unheld, path.join(dir, 'state-plain'))
  try {
    const after: number[] = []
    const direct: number[] = []
    for (let i = 0; i < calls; i++) {
      after.push(await heldCall(service, held, i))
      const t0 = performance.now()
      await plain.callTool({name: 'echo', arguments: {message: `plain ${i}`}})
      direct.push(performance.now() - t0)
    }
    after.sort((a, b) => a - b)
    direct.sort((a, b) => a - b)
    return [
      {
        what: `held tools/call, decision recorded -> client's answer (${label}, ${calls} calls)`,
        value: `p50 ${ms(quantile(after, 0.5))} ms, p99 ${ms(quantile(after, 0.99))} ms`,
        target: 'p99 added < 50 ms',
        ceiling: `added p99 ${ms(quantile(after, 0.99) - quantile(direct, 0.5))} ms over an unheld call`,
      },
      {
        what: `the same call not held, through mcp-proxy --server (${label})`,
        value: `p50 ${ms(quantile(direct, 0.5))} ms, p99 ${ms(quantile(direct, 0.99))} ms`,
        target: '-',
      },
    ]
  } finally {
    await held.close()
    await plain.close()
  }
}

async function onStore(label: string, calls: number, databaseUrl?: string): Promise<OversightRow[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-bench-oversight-'))
  const service = await startService({
    dataDir: dir,
    databaseUrl,
    host: '127.0.0.1',
    port: 0,
    apiKeys: parseKeyFile(`${WRITER} read,write\n${APPROVER} read,approve name=bench\n`),
    app: {logError: () => {}},
  })
  try {
    return await measure(label, service, dir, calls)
  } finally {
    await service.close()
    await rm(dir, {recursive: true, force: true})
  }
}

/** The rows of the phase: the data directory, then PostgreSQL when AUDIT_TRAIL_BENCH_DATABASE_URL is set. */
export async function oversightRows(calls = 200): Promise<OversightRow[]> {
  const rows = await onStore('data directory', calls)
  const server = process.env.AUDIT_TRAIL_BENCH_DATABASE_URL
  if (server === undefined) return rows
  const name = `atrail_bench_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({connectionString: server})
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
    const url = new URL(server)
    url.pathname = `/${name}`
    rows.push(...(await onStore('PostgreSQL', calls, url.toString())))
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
  return rows
}
