/**
 * The same hostile values sent to every read endpoint of both stores: no answer is a 5xx, and both
 * stores answer each request with the same status (docs/api.md, Text the stores cannot hold).
 */
import {expect} from 'chai'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import WebSocket from 'ws'
import {createApp} from '../../src/server/app.js'
import {attachStream} from '../../src/server/stream.js'
import {makeEvent, startTestApi, type HttpResponse, type TestApi} from '../support/harness.js'
import {postgresAvailable, postgresSkips, type StoreKind} from '../support/stores.js'

/** Values as a client would put them in a URL, already percent-encoded where they must be. */
const QUERY_VALUES = [
  '%00',
  'a%00b',
  // Invalid UTF-8: a UTF-16 surrogate encoded on its own, and the overlong two-byte form of U+0000.
  '%ED%A0%80',
  '%C0%80',
  '%EF%BF%BD',
  'x'.repeat(12_000),
  `${'%C3%A9'.repeat(1500)}`,
  Array.from({length: 1500}, (_, i) => `w${i}`).join('%20'),
  `%22${Array.from({length: 1500}, (_, i) => `w${i % 7}`).join('%20')}%22`,
  "'",
  '%22',
  "O'Brien%22%3B%20DROP%20TABLE%20events%3B--",
  '%25',
  '_',
  '%25_%25',
  '%5C',
  '%5C%5C%27',
  'a%20%26%20!b%20%7C%20c%3A*',
  "'a'%3A1%20%3C-%3E%20(b)",
  '%7B%22env%22%3A%22prod%22%7D',
  '',
]

/** Values a JSON body carries, where unpaired surrogates can be written too. */
const BODY_VALUES = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\uFFFD',
  'x'.repeat(300_000),
  "'",
  '"; DROP TABLE events; --',
  '%',
  '_',
  '\\',
  'a & !b | c:*',
  '*',
]

/** Every GET that reads the store with a value from the request. */
function readPaths(value: string): string[] {
  const filters = ['agent_id', 'action_type', 'trace_id', 'session_id', 'label.env', 'since', 'until']
  return [
    ...filters.map((name) => `/v1/events?${name}=${value}`),
    `/v1/events?agent_id=${value}&label.team=${value}&limit=5`,
    `/v1/events/${value}`,
    `/v1/search?q=${value}`,
    `/v1/search?q=%22${value}%20customer%22`,
    ...filters.map((name) => `/v1/export?${name}=${value}`),
    `/v1/verify?agent_id=${value}`,
    `/v1/merkle/proof/${value}`,
    `/v1/merkle/proof/${value}?tree_size=${value}`,
    `/v1/merkle/consistency?first=${value}`,
    `/tlog/tile/0/${value}`,
  ]
}

/** Policy checks whose scope and matchers carry the value. */
function policyBodies(value: string): unknown[] {
  return [
    {scope: {agent_id: value}, policies: [{name: 'chain', type: 'chain_integrity'}]},
    {scope: {agent_id: value, since: value}, policies: [{name: 'chain', type: 'chain_integrity'}]},
    {policies: [{name: 'forbid', type: 'forbidden_action', match: {agent_id: value, labels: {env: value}}}]},
  ]
}

interface Answer {
  status: number
  code?: string
}

async function answer(api: TestApi, method: string, path: string, body?: unknown): Promise<Answer> {
  const res: HttpResponse = await api.request(method, path, body === undefined ? {} : {body})
  expect(res.status, `${method} ${path.slice(0, 200)}: ${res.text.slice(0, 300)}`).to.be.below(500)
  return {status: res.status, code: res.body?.error?.code}
}

/** GET /v1/stream on the services of `api`, as `serve` attaches it; resolves with its URL and a closer. */
async function streamServer(api: TestApi): Promise<{url: string; close(): Promise<void>}> {
  const server = http.createServer(createApp(api.services).callback())
  const stream = attachStream(server, api.services)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      stream.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/**
 * The stream's answer to a query: the HTTP status when the upgrade is refused, 500 when the
 * connection is closed with 1011 (the replay failed), 101 when it is still open after a while.
 */
function streamAnswer(url: string, query: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}/v1/stream?${query}`)
    ws.on('unexpected-response', (_request, response) => {
      response.resume()
      resolve({status: response.statusCode ?? 0})
    })
    ws.on('open', () => setTimeout(() => ws.close(), 500))
    ws.on('close', (code) => resolve({status: code === 1011 ? 500 : 101}))
    ws.on('error', (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error)
    })
  })
}

/**
 * An event without what each store makes its own: id, recorded_at, the salts drawn for it, and the
 * hashes that cover them (commitments, hash, prev_hash), index.
 */
function withoutStoreFields(event: Record<string, unknown>): Record<string, unknown> {
  const {id: _id, recorded_at: _recordedAt, hash: _hash, prev_hash: _prevHash, index: _index, ...rest} = event
  const {salts: _salts, commitments: _commitments, ...content} = rest
  return content
}

const NUL_EVENT_ID = '0b5e7a8e-4a5b-4c1e-9d7a-2f6a1b3c4d5e'

/** Three agents' events, one holding U+0000 in every field that can hold it. */
async function fill(api: TestApi): Promise<void> {
  const events = [
    makeEvent({agent_id: 'agent-1', labels: {env: 'prod', team: 'a'}, session_id: 's-1', trace_id: 't-1'}),
    makeEvent({agent_id: "O'Brien", labels: {env: '%_\\'}, input: {q: "a & !b | c:* 'x'"}}),
    // The text \u0000, six characters, not the character.
    makeEvent({agent_id: 'agent-3', labels: {env: '\\u0000'}, session_id: '\\u0000', input: '\\\\u0000'}),
    makeEvent({
      id: NUL_EVENT_ID,
      timestamp: '2026-11-01T00:00:00.000Z',
      agent_id: 'agent-2',
      labels: {env: 'a\u0000b'},
      session_id: 'a\u0000b',
      trace_id: '\u0000',
      input: {text: 'customer a\u0000b'},
    }),
  ]
  const res = await api.request('POST', '/v1/batch', {body: events})
  expect(res.status, res.text).to.equal(201)
}

describe('hostile values on every read endpoint, both stores alike', function () {
  this.timeout(300_000)
  const apis = new Map<StoreKind, TestApi>()

  before(async function () {
    if (!(await postgresAvailable())) {
      postgresSkips.count++
      this.skip()
    }
    for (const store of ['sqljs', 'postgres'] as const) {
      const api = await startTestApi({store, app: {otlp: true}})
      apis.set(store, api)
      await fill(api)
    }
  })
  after(async () => {
    for (const api of apis.values()) await api.close()
  })

  /** The request on both stores: no 5xx on either, the same status on both. */
  async function both(method: string, path: string, body?: unknown): Promise<Answer> {
    const [sqljs, postgres] = await Promise.all([...apis.values()].map((api) => answer(api, method, path, body)))
    expect(postgres, `${method} ${path.slice(0, 200)}`).to.deep.equal(sqljs)
    return sqljs!
  }

  it('answers each query value the same on both stores, never with a 5xx', async () => {
    for (const value of QUERY_VALUES) for (const path of readPaths(value)) await both('GET', path)
    for (const path of ['/v1/agents', '/v1/stats']) await both('GET', path)
  })

  it('refuses U+0000 in a filter with 400 naming the parameter', async () => {
    for (const name of ['agent_id', 'action_type', 'trace_id', 'session_id', 'label.env']) {
      for (const path of [`/v1/events?${name}=a%00b`, `/v1/export?${name}=%00`]) {
        const res = await apis.get('postgres')!.request('GET', path)
        expect(res.status, path).to.equal(400)
        expect(res.body.error.details.map((d: {field: string}) => d.field)).to.deep.equal([name])
      }
    }
    const res = await apis.get('postgres')!.request('GET', '/v1/verify?agent_id=%00')
    expect(res.status).to.equal(400)
    expect(res.body.error.details[0].field).to.equal('agent_id')
  })

  it('answers a malformed id in a path with 404 on both stores', async () => {
    for (const value of ['%00', "'", '%ED%A0%80', 'x'.repeat(5000)]) {
      expect((await both('GET', `/v1/events/${value}`)).status).to.equal(404)
      expect((await both('GET', `/v1/merkle/proof/${value}`)).status).to.equal(404)
    }
  })

  it('matches text that merely looks like SQL, LIKE or tsquery syntax as plain text', async () => {
    for (const api of apis.values()) {
      const byAgent = await api.request('GET', `/v1/events?agent_id=${encodeURIComponent("O'Brien")}`)
      expect(byAgent.body.map((e: {agent_id: string}) => e.agent_id)).to.deep.equal(["O'Brien"])
      const byLabel = await api.request('GET', `/v1/events?label.env=${encodeURIComponent('%_\\')}`)
      expect(byLabel.body).to.have.length(1)
      expect((await api.request('GET', '/v1/events?label.env=%25')).body).to.deep.equal([])
      const search = await api.request('GET', `/v1/search?q=${encodeURIComponent("'x' c:*")}`)
      expect(search.body.total).to.equal(1)
    }
  })

  it('answers each policy scope and matcher the same on both stores, never with a 5xx', async () => {
    for (const value of BODY_VALUES)
      for (const body of policyBodies(value)) await both('POST', '/v1/policy/check', body)
    const refused = await both('POST', '/v1/policy/check', policyBodies('a\u0000b')[0])
    expect(refused.status).to.equal(400)
  })

  it('records or refuses ingested strings holding U+0000 or unpaired surrogates alike on both stores', async () => {
    const span = (name: string, value: string) => ({
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      name,
      startTimeUnixNano: '1763715600250000000',
      endTimeUnixNano: '1763715601750000000',
      attributes: [
        {key: 'gen_ai.agent.name', value: {stringValue: 'otlp-agent'}},
        {key: `key ${value}`, value: {stringValue: value}},
        {key: 'list', value: {arrayValue: {values: [{stringValue: value}]}}},
      ],
    })
    const traces = {
      resourceSpans: [{scopeSpans: [{spans: BODY_VALUES.slice(0, 5).map((value, i) => span(`span-${i}`, value))}]}],
    }
    const [sqljs, postgres] = await Promise.all(
      [...apis.values()].map(async (api) => {
        const res = await api.request('POST', '/v1/traces', {body: traces})
        expect(res.status, res.text).to.be.below(500)
        const events = (await api.request('GET', '/v1/events?agent_id=otlp-agent')).body
        return {status: res.status, body: res.body, events: events.map(withoutStoreFields)}
      }),
    )
    // OTLP's strings are UTF-8: an unpaired surrogate of OTLP/JSON is read as U+FFFD (docs/otlp.md).
    expect(sqljs!.events.map((e: {action_name: string}) => e.action_name)).to.have.length(5)
    expect(postgres).to.deep.equal(sqljs)
    for (const value of BODY_VALUES.slice(0, 5)) {
      for (const field of ['session_id', 'error', 'input', 'labels']) {
        const sent = field === 'labels' ? {env: value} : value
        const event = makeEvent({agent_id: 'ingest', timestamp: '2026-11-01T00:00:00Z', [field]: sent})
        const answers = await Promise.all(
          [...apis.values()].map(async (api) => {
            const res = await api.request('POST', '/v1/events', {body: event})
            expect(res.status, res.text).to.be.below(500)
            return res.status === 201 ? withoutStoreFields(res.body) : res.body
          }),
        )
        expect(answers[1], `${field}: ${JSON.stringify(value)}`).to.deep.equal(answers[0])
      }
    }
  })

  it('answers each stream filter the same on both stores', async () => {
    const streams = await Promise.all([...apis.values()].map(streamServer))
    after(() => Promise.all(streams.map((stream) => stream.close())))
    for (const value of QUERY_VALUES.slice(0, 6)) {
      for (const query of [`agent_id=${value}&from_index=0`, `action_type=${value}&from_index=0`]) {
        const [sqljs, postgres] = await Promise.all(streams.map((stream) => streamAnswer(stream.url, query)))
        expect(sqljs!.status, query).to.be.below(500)
        expect(postgres, query).to.deep.equal(sqljs)
      }
    }
  })

  it('gives back the event holding U+0000 exactly on both stores, and finds none by a lookalike', async () => {
    const read = async (api: TestApi, path: string) => (await api.request('GET', path)).body
    const [sqljs, postgres] = await Promise.all(
      [...apis.values()].map((api) => read(api, '/v1/events?agent_id=agent-2')),
    )
    const content = ([event]: Record<string, unknown>[]) => withoutStoreFields(event!)
    expect(sqljs).to.have.length(1)
    expect(content(postgres)).to.deep.equal(content(sqljs))
    expect(postgres[0].id).to.equal(NUL_EVENT_ID)
    expect(postgres[0].session_id).to.equal('a\u0000b')
    expect(postgres[0].labels).to.deep.equal({env: 'a\u0000b'})
    for (const api of apis.values()) {
      // U+FFFD is what PostgreSQL's columns could have shown in place of U+0000: it matches nothing.
      for (const name of ['session_id', 'trace_id', 'label.env']) {
        expect(await read(api, `/v1/events?agent_id=agent-2&${name}=a%EF%BF%BDb`), name).to.deep.equal([])
        expect(await read(api, `/v1/events?agent_id=agent-2&${name}=%EF%BF%BD`), name).to.deep.equal([])
      }
      expect((await read(api, '/v1/search?q=customer%20a')).total).to.equal(1)
      const literal = await read(api, '/v1/events?label.env=%5Cu0000&session_id=%5Cu0000')
      expect(literal.map((e: {agent_id: string; input: string}) => [e.agent_id, e.input])).to.deep.equal([
        ['agent-3', '\\\\u0000'],
      ])
      expect((await read(api, '/v1/verify')).valid).to.equal(true)
    }
  })
})
