/**
 * Receipts and signed statements (issue 32): GET /v1/events/:id/receipt against GET
 * /v1/merkle/proof/:id for the same events in the same run (both binary-safe loads over the same
 * 1,000 events spread over the log), and POST /entries against POST /v1/events.
 */
import http from 'node:http'
import {once} from 'node:events'
import autocannon from 'autocannon'
import {createApp} from '../src/server/app.js'
import type {AuditServices} from '../src/services/audit.js'
import {signedStatement, testAgentKey} from '../test/support/statements.js'
import {binaryLoad, type LoadResult} from './binary-load.js'
import {syntheticEvent} from './events.js'
import {fmt, type BenchRow} from './rows.js'

/** About `count` event ids spread evenly over the log. */
async function spreadIds(services: AuditServices, count: number): Promise<string[]> {
  const size = await services.tree.size()
  const ids: string[] = []
  const pages = Math.min(count, 10)
  for (let page = 0; page < pages; page++) {
    const offset = Math.floor((page * size) / pages)
    const {events} = await services.query.listEvents({offset: String(offset), limit: String(count / pages)})
    ids.push(...events.map((event) => event.id))
  }
  return ids
}

export async function receiptPhase(services: AuditServices, record: (row: BenchRow) => void): Promise<void> {
  const events = await services.tree.size()
  // Receipts over the latest checkpoint, as served: one signed first that holds every event.
  await services.checkpoints.signIfGrown()
  // The agent's key registered in the log (docs/api.md, Agent keys), as POST /entries looks it up there.
  const agent = testAgentKey('Ed25519')
  await services.keys.register('bench-statements', agent.kid, agent.jwk)
  const server = http.createServer(createApp(services, {logError: () => {}}).callback())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
  const ids = await spreadIds(services, 1000)
  // Alternated, twice each, the better of each kept: a busy machine slows one window, not both kinds.
  const proofPaths = ids.map((id) => `/v1/merkle/proof/${id}`)
  const receiptPaths = ids.map((id) => `/v1/events/${id}/receipt`)
  const better = (a: LoadResult, b: LoadResult) => (a.rps >= b.rps ? a : b)
  let proofs = await binaryLoad(url, 50, 4, proofPaths)
  let receipts = await binaryLoad(url, 50, 4, receiptPaths)
  proofs = better(proofs, await binaryLoad(url, 50, 4, proofPaths))
  receipts = better(receipts, await binaryLoad(url, 50, 4, receiptPaths))
  record({
    what: `GET /v1/events/:id/receipt (COSE, Ed25519) at ${fmt(events)} events, 1,000 events in turn, 50 conns`,
    value: `${fmt(receipts.rps)} receipts/s, p50 ${receipts.p50} ms, p99 ${receipts.p99} ms`,
    target: '>= 0.8 of GET /v1/merkle/proof/:id',
    ceiling: `${fmt(receipts.rps / proofs.rps, 2)} of GET /v1/merkle/proof/:id (${fmt(proofs.rps)} req/s, same events)`,
  })
  // Each registration waits for the checkpoint that holds it (at most one a second, shared by all
  // waiting): its latency, not the server, bounds a fixed number of connections.
  const statement = Buffer.from(signedStatement(agent, {iss: 'bench-statements'}))
  const post = (path: string, body: Buffer | string, type: string, connections: number) =>
    autocannon({url: `${url}${path}`, method: 'POST', headers: {'content-type': type}, body, connections, duration: 8})
  const plain = await post('/v1/events', JSON.stringify(syntheticEvent(events + 1, 'receipts')), 'application/json', 50)
  for (const connections of [50, 500]) {
    const entries = await post('/entries', statement, 'application/cose', connections)
    if (entries.non2xx > 0) throw new Error(`POST /entries: ${entries.non2xx} non-2xx answers`)
    record({
      what: `POST /entries (EdDSA statement, answered with its receipt), ${connections} conns`,
      value: `${fmt(entries.requests.average)} statements/s, p50 ${entries.latency.p50} ms`,
      target: '-',
      ceiling: `POST /v1/events (unsigned), 50 conns: ${fmt(plain.requests.average)} events/s`,
    })
  }
  server.closeAllConnections()
  server.close()
}
