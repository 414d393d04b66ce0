/**
 * Bounded queries and the smaller findings of issue 24 (items 3 and 4): a cap on label filters,
 * /v1/export's errors as the contract's error body, one Authorization header, the read scope of
 * POST /v1/policy/check/ with a trailing slash, the 415 of an unknown Content-Encoding, agents
 * without a recorded head, and the 1 MiB limit of a /v1/batch element.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import http from 'node:http'
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import WebSocket from 'ws'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {MAX_LABEL_FILTERS} from '../../src/core/query-params.js'
import {startService} from '../../src/server/start.js'
import {openAudit} from '../../src/services/audit.js'
import {makeEvent, removeDir, startTestApi, tempDir, type TestApi} from '../support/harness.js'

const READER = 'reader-key-0123456789'
const WRITER = 'writer-key-0123456789'

/** A request sent with Node's http client, which can repeat a header line (fetch joins them). */
function rawRequest(
  url: string,
  method: string,
  requestPath: string,
  headers: Record<string, string | string[]>,
): Promise<{status: number; body: any}> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${requestPath}`, {method}, (response) => {
      let text = ''
      response.on('data', (chunk) => (text += chunk))
      response.on('end', () =>
        resolve({status: response.statusCode!, body: text === '' ? undefined : JSON.parse(text)}),
      )
    })
    for (const [name, value] of Object.entries(headers)) request.setHeader(name, value)
    request.on('error', reject)
    request.end()
  })
}

function labelQuery(count: number): string {
  return Array.from({length: count}, (_, i) => `label.k${i}=v`).join('&')
}

describe('bounded queries and the smaller findings', function () {
  this.timeout(60_000)
  let api: TestApi | undefined
  afterEach(async () => {
    await api?.close()
    api = undefined
  })

  it('more than 64 label filters: 400 validation_error on /v1/events and /v1/export; 64 are answered', async () => {
    api = await startTestApi()
    for (const endpoint of ['/v1/events', '/v1/export']) {
      const refused = await api!.request('GET', `${endpoint}?${labelQuery(1000)}`)
      expect(refused.status, endpoint).to.equal(400)
      expect(refused.body.error.code).to.equal('validation_error')
      expect(refused.body.error.details).to.deep.equal([
        {field: 'label.*', message: 'at most 64 label filters (an event holds at most 64 labels)'},
      ])
      expect((await api!.request('GET', `${endpoint}?${labelQuery(MAX_LABEL_FILTERS + 1)}`)).status).to.equal(400)
      expect((await api!.request('GET', `${endpoint}?${labelQuery(MAX_LABEL_FILTERS)}`)).status).to.equal(200)
    }
  })

  it('/v1/export: a failure before the package starts is answered with the error body', async () => {
    api = await startTestApi()
    await api!.services.ingest.recordBatch([makeEvent()])
    api!.services.store.scanEvents = () => {
      throw new Error('disk on fire')
    }
    const response = await api!.request('GET', '/v1/export')
    expect(response.status).to.equal(500)
    expect(response.body.error.code).to.equal('internal_error')
    expect(response.headers.get('content-disposition')).to.equal(null)
  })

  it('two Authorization headers: 400, also on the stream upgrade; one is answered', async () => {
    const dataDir = await tempDir()
    const service = await startService({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      apiKeys: parseKeyFile(`${READER} read\n${WRITER} write\n`),
    })
    const url = service.url
    try {
      const twice = await rawRequest(url, 'GET', '/v1/stats', {authorization: [`Bearer ${READER}`, `Bearer ${WRITER}`]})
      expect(twice.status).to.equal(400)
      expect(twice.body.error.code).to.equal('validation_error')
      expect((await rawRequest(url, 'GET', '/v1/stats', {authorization: `Bearer ${READER}`})).status).to.equal(200)
      const upgrade = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream`, {
          headers: {authorization: [`Bearer ${READER}`, `Bearer ${WRITER}`] as never},
        })
        ws.once('unexpected-response', (_request, response) => resolve(response.statusCode!))
        ws.once('open', () => reject(new Error('upgraded with two Authorization headers')))
        ws.once('error', () => {})
      })
      expect(upgrade).to.equal(400)
    } finally {
      await service.close()
      await removeDir(dataDir)
    }
  })

  it('POST /v1/policy/check/ with a trailing slash needs the read scope, as without it', async () => {
    api = await startTestApi({app: {apiKeys: parseKeyFile(`${READER} read\n${WRITER} write\n`)}})
    const body = {policies: [{name: 'c', type: 'chain_integrity'}]}
    for (const route of ['/v1/policy/check', '/v1/policy/check/']) {
      const response = await api!.request('POST', route, {body, headers: {authorization: `Bearer ${READER}`}})
      expect(response.status, route).to.equal(200)
    }
    expect(
      (await api!.request('POST', '/v1/events/', {body: makeEvent(), headers: {authorization: `Bearer ${READER}`}}))
        .status,
    ).to.equal(403)
  })

  it('Content-Encoding zstd: 415 naming the encoding', async () => {
    api = await startTestApi()
    const response = await api!.request('POST', '/v1/events', {
      raw: JSON.stringify(makeEvent()),
      headers: {'content-type': 'application/json', 'content-encoding': 'zstd'},
    })
    expect(response.status).to.equal(415)
    expect(response.body.error.message).to.equal('Content-Encoding zstd is not supported (identity, gzip, deflate, br)')
  })

  it('a /v1/batch element over 1 MiB is refused alone (400), the others recorded', async () => {
    api = await startTestApi()
    const big = makeEvent({input: 'x'.repeat(1024 * 1024)})
    const response = await api!.request('POST', '/v1/batch', {body: [makeEvent(), big, makeEvent()]})
    expect(response.status).to.equal(207)
    expect(response.body.map((r: {status: number}) => r.status)).to.deep.equal([201, 400, 201])
    expect(response.body[1].error.message).to.match(
      /the event is \d+ bytes of JSON, more than the 1048576 bytes of one event/,
    )
    expect((await api!.request('GET', '/v1/stats')).body.total_events).to.equal(2)
  })

  it(
    'an agent whose agents row was removed while stopped: ' +
      'listed with chain_valid false, as chain_health counts it',
    async () => {
      const dataDir = await tempDir()
      const seeded = await openAudit({dataDir})
      await seeded.ingest.recordBatch([
        makeEvent({agent_id: 'a'}),
        makeEvent({agent_id: 'b'}),
        makeEvent({agent_id: 'b'}),
      ])
      await seeded.close()
      for (const file of await readdir(dataDir)) if (file.startsWith('journal')) await rm(path.join(dataDir, file))
      execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), `delete from agents where agent_id = 'b'`])
      api = await startTestApi({dataDir})
      try {
        const agents = (await api!.request('GET', '/v1/agents')).body
        expect(
          agents.map((a: {agent_id: string; chain_valid: boolean; event_count: number}) => [
            a.agent_id,
            a.event_count,
            a.chain_valid,
          ]),
        ).to.deep.equal([
          ['a', 1, true],
          ['b', 2, false],
        ])
        expect((await api!.request('GET', '/v1/stats')).body.chain_health).to.equal(0.5)
      } finally {
        await api!.close()
        api = undefined
        await removeDir(dataDir)
      }
    },
  )
})
