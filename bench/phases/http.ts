import {once} from 'node:events'
import http from 'node:http'
import path from 'node:path'
import Koa from 'koa'
import {koaBody} from 'koa-body'
import {createApp} from '../../src/server/app.js'
import type {AuditServices} from '../../src/services/audit.js'
import {storedEvents, syntheticEvent} from '../events.js'
import {hashCeiling} from './ceilings.js'
import {EVENTS, root, fmt, record, load, latency} from '../common.js'

export async function httpPhase(services: AuditServices): Promise<void> {
  const server = http.createServer(createApp(services, {logError: () => {}}).callback())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
  const query = await latency(url, '/v1/events?agent_id=agent-7&limit=100')
  // Ceiling: a bare Koa endpoint answering the same bytes from memory, with nothing else to do.
  const pageBytes = Buffer.from(
    JSON.stringify((await services.query.listEvents({agent_id: 'agent-7', limit: '100'})).events),
  )
  const still = new Koa()
  still.use((ctx) => {
    ctx.set('X-Total-Count', '1')
    ctx.type = 'application/json'
    ctx.body = pageBytes
  })
  const stillServer = http.createServer(still.callback())
  stillServer.listen(0, '127.0.0.1')
  await once(stillServer, 'listening')
  const stillPage = await latency(`http://127.0.0.1:${(stillServer.address() as {port: number}).port}`, '/')
  stillServer.close()
  record({
    what:
      `ceiling: a bare Koa endpoint sending the same page (${fmt(pageBytes.length / 1000)} KB) from memory, 50 ` +
      `conns`,
    value: `p50 ${stillPage.p50} ms, p99 ${stillPage.p99} ms`,
    target: '-',
    ceiling: `${fmt(stillPage.rps)} req/s`,
  })
  record({
    what:
      `GET /v1/events?agent_id=X&limit=100 at ${fmt(EVENTS)} events, 50 conns (the same full page: served from ` +
      `memory after the first)`,
    value: `p50 ${query.p50} ms, p99 ${query.p99} ms`,
    target: 'p99 < 10 ms',
    ceiling: `${fmt(query.rps)} req/s = ${fmt(query.rps / stillPage.rps, 2)} of the bare Koa page`,
  })
  // Every request a page not asked before (another agent or offset), so none comes from memory.
  const distinct = await latency(url, '/v1/events', path.join(root, 'bench', 'distinct-page.cjs'))
  record({
    what: `GET /v1/events?agent_id=X&limit=100&offset=Y at ${fmt(EVENTS)} events, 50 conns, every request another page`,
    value: `p50 ${distinct.p50} ms, p99 ${distinct.p99} ms`,
    target: '-',
    ceiling: `${fmt(distinct.rps)} req/s`,
  })
  const search = await latency(url, '/v1/search?q=refund%20prod&limit=100')
  record({
    what: `GET /v1/search?q=<2 terms>&limit=100 at ${fmt(EVENTS)} events, 50 conns`,
    value: `p50 ${search.p50} ms, p99 ${search.p99} ms`,
    target: '-',
    ceiling: `${fmt(search.rps)} req/s`,
  })

  // Ceiling: a Koa endpoint that parses the same JSON body and does nothing else.
  const bare = new Koa()
  bare.use(koaBody({jsonLimit: '1mb'}))
  bare.use((ctx) => {
    ctx.status = 201
    ctx.body = {ok: true}
  })
  const bareServer = http.createServer(bare.callback())
  bareServer.listen(0, '127.0.0.1')
  await once(bareServer, 'listening')
  const body = JSON.stringify(syntheticEvent(1, 'http'))
  const post = (target: string, requestBody: string) =>
    load({url: target, method: 'POST', headers: {'content-type': 'application/json'}, body: requestBody})
  const ceiling = await post(`http://127.0.0.1:${(bareServer.address() as {port: number}).port}/`, body)
  bareServer.close()
  const single = await post(`${url}/v1/events`, body)
  if (single.non2xx > 0) throw new Error(`single ingest: ${single.non2xx} non-2xx answers`)
  record({
    what: 'ceiling: parse-only Koa endpoint, 50 conns',
    value: `${fmt(ceiling.requests.average)} req/s`,
    target: '-',
  })
  record({
    what: 'POST /v1/events, durable, 50 conns',
    value: `${fmt(single.requests.average)} events/s`,
    target: '>= 0.4 of parse-only (issue 46)',
    ceiling: `${fmt(single.requests.average / ceiling.requests.average, 2)} of parse-only Koa`,
  })
  const batchBody = JSON.stringify(Array.from({length: 500}, (_, i) => syntheticEvent(i, 'http')))
  const batch = await post(`${url}/v1/batch`, batchBody)
  if (batch.non2xx > 0) throw new Error(`batch ingest: ${batch.non2xx} non-2xx answers`)
  record({
    what: 'POST /v1/batch of 500, durable, 50 conns',
    value: `${fmt(batch.requests.average * 500)} events/s`,
    target: '-',
  })
  // Issue 46's row: 8 connections, beside the one-thread hash ceiling taken right before it.
  const hashes = hashCeiling(storedEvents(0, Math.min(EVENTS, 20_000), new Map(), 'http'))
  const batch8 = await load({
    url: `${url}/v1/batch`,
    connections: 8,
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: batchBody,
  })
  if (batch8.non2xx > 0) throw new Error(`batch ingest: ${batch8.non2xx} non-2xx answers`)
  record({
    what: 'POST /v1/batch of 500, durable, 8 conns',
    value: `${fmt(batch8.requests.average * 500)} events/s`,
    target: '>= 0.2 of the hash ceiling (issue 46)',
    ceiling: `${fmt((batch8.requests.average * 500) / hashes, 2)} of canonicalize + SHA-256 in one thread (${fmt(
      hashes,
    )} /s)`,
  })
  server.closeAllConnections()
  server.close()
}
