import {expect} from 'chai'
import WebSocket from 'ws'
import {parseKeyFile, KeyFileError} from '../../src/core/auth/keys.js'
import {makeEvent, useService} from '../support/harness.js'

const ADMIN = 'admin-key-0123456789abcdef'
const READER = 'reader-key-0123456789abcdef'
const WRITER = 'writer-key-0123456789abcdef'
const KEY_FILE = `# test keys\n${ADMIN}\n\n${READER} read\n${WRITER}   write\n`

/** Every endpoint with the scope it needs. */
const ENDPOINTS: Array<{method: string; path: string; scope: 'read' | 'write'; body?: unknown}> = [
  {method: 'POST', path: '/v1/events', scope: 'write', body: makeEvent()},
  {method: 'POST', path: '/v1/batch', scope: 'write', body: [makeEvent()]},
  {method: 'POST', path: '/v1/timestamp', scope: 'write'},
  {method: 'POST', path: '/v1/traces', scope: 'write', body: {resourceSpans: []}},
  {method: 'GET', path: '/v1/events', scope: 'read'},
  {method: 'GET', path: '/v1/events/0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091', scope: 'read'},
  {method: 'GET', path: '/v1/search?q=x', scope: 'read'},
  {method: 'GET', path: '/v1/agents', scope: 'read'},
  {method: 'GET', path: '/v1/stats', scope: 'read'},
  {method: 'GET', path: '/v1/verify', scope: 'read'},
  {method: 'GET', path: '/v1/merkle/root', scope: 'read'},
  {method: 'GET', path: '/v1/merkle/consistency?first=0', scope: 'read'},
  {method: 'GET', path: '/v1/merkle/proof/0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091', scope: 'read'},
  {method: 'GET', path: '/v1/verify?agent_id=nobody', scope: 'read'},
  {method: 'GET', path: '/v1/export', scope: 'read'},
  {method: 'GET', path: '/v1/timestamps', scope: 'read'},
  {method: 'GET', path: '/v1/timestamps/verify', scope: 'read'},
  {method: 'GET', path: '/v1/timestamps/ca', scope: 'read'},
  {method: 'POST', path: '/v1/policy/check', scope: 'read', body: {policies: [{name: 'c', type: 'chain_integrity'}]}},
  {method: 'GET', path: '/v1/dashboard/config', scope: 'read'},
]

describe('API keys and scopes', () => {
  const service = useService({apiKeys: parseKeyFile(KEY_FILE), app: {otlp: true, logError: () => {}}}, 'suite')

  async function call(method: string, path: string, key?: string, body?: unknown) {
    const headers: Record<string, string> = {}
    if (key !== undefined) headers.authorization = `Bearer ${key}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return {
      status: res.status,
      headers: res.headers,
      text,
      body: (() => {
        try {
          return JSON.parse(text)
        } catch {
          return text
        }
      })(),
    }
  }

  for (const endpoint of ENDPOINTS) {
    it(
      `${endpoint.method} ${endpoint.path}: 401 without or with a wrong key, 403 without the scope, served with the ` +
        `right key`,
      async () => {
        const none = await call(endpoint.method, endpoint.path, undefined, endpoint.body)
        expect(none.status).to.equal(401)
        expect(none.body.error.code).to.equal('unauthorized')
        expect(none.headers.get('www-authenticate')).to.equal('Bearer')
        const wrong = await call(endpoint.method, endpoint.path, 'not-a-real-key-0123456789', endpoint.body)
        expect(wrong.status).to.equal(401)
        expect(wrong.text).not.to.contain('not-a-real-key')
        const otherScope = endpoint.scope === 'read' ? WRITER : READER
        const forbidden = await call(endpoint.method, endpoint.path, otherScope, endpoint.body)
        expect(forbidden.status).to.equal(403)
        expect(forbidden.body.error.code).to.equal('forbidden')
        const right = await call(
          endpoint.method,
          endpoint.path,
          endpoint.scope === 'read' ? READER : WRITER,
          endpoint.body,
        )
        expect(right.status, right.text).to.be.oneOf([200, 201, 404])
        const admin = await call(endpoint.method, endpoint.path, ADMIN, endpoint.body)
        expect(admin.status).to.not.be.oneOf([401, 403])
      },
    )
  }

  it('keeps /healthz open, with or without a trailing slash; any other path needs a key', async () => {
    for (const path of ['/healthz', '/healthz/', '/HEALTHZ']) {
      const res = await call('GET', path)
      expect(res.status, path).to.equal(200)
      expect(JSON.parse(res.text), path).to.include({status: 'ok'})
    }
    // Deny by default: without a key, nothing says which other paths exist.
    for (const path of ['/nope', '/healthz/x', '/healthzz'])
      expect((await call('GET', path)).status, path).to.equal(401)
  })

  it('never lets path tricks past authentication', async () => {
    for (const path of [
      '/v1/../v1/events',
      '//v1/events',
      '/v1//events',
      '/V1/EVENTS',
      '/v1%2Fevents',
      '/%761/events',
      '/v1/events/',
      '/v1/events?x=/healthz',
      '/healthz/../v1/events',
    ]) {
      const res = await call('GET', path)
      expect(res.status, path).to.be.oneOf([401, 404])
      if (res.status === 404) expect(res.text, path).not.to.contain('"agent_id"')
      const read = await fetch(`${service.url}${path}`)
      expect(read.status, path).not.to.equal(200)
    }
  })

  it('authenticates the WebSocket upgrade: header or access_token, refused before it is accepted', async () => {
    const ws = (query: string, headers: Record<string, string> = {}) =>
      new Promise<number | 'open'>((resolve) => {
        const socket = new WebSocket(`${service.url.replace('http', 'ws')}/v1/stream${query}`, {headers})
        socket.on('open', () => {
          socket.close()
          resolve('open')
        })
        socket.on('unexpected-response', (_req, res) => resolve(res.statusCode!))
      })
    expect(await ws('')).to.equal(401)
    expect(await ws('?access_token=wrong-key-0123456789abcd')).to.equal(401)
    expect(await ws(`?access_token=${WRITER}`)).to.equal(403)
    expect(await ws(`?access_token=${READER}`)).to.equal('open')
    expect(await ws('', {authorization: `Bearer ${ADMIN}`})).to.equal('open')
  })

  it('accepts access_token only on the stream', async () => {
    expect((await call('GET', `/v1/events?access_token=${READER}`)).status).to.equal(401)
  })

  it('parses key files strictly, naming the line', () => {
    expect(parseKeyFile(KEY_FILE).map((k) => [k.key, [...k.scopes].sort().join(',')])).to.deep.equal([
      [ADMIN, 'read,write'],
      [READER, 'read'],
      [WRITER, 'write'],
    ])
    expect(() => parseKeyFile('short\n')).to.throw(KeyFileError, /line 1/)
    expect(() => parseKeyFile(`${ADMIN}\n${READER} root\n`)).to.throw(KeyFileError, /line 2.*root/)
    expect(() => parseKeyFile(`# nothing\n`))
      .to.throw(KeyFileError)
      .with.property('code', 'no_key')
    expect(() => parseKeyFile(`${ADMIN} read extra\n`)).to.throw(KeyFileError, /line 1/)
    expect(() => parseKeyFile(`${ADMIN} read,\n`)).to.throw(KeyFileError, /line 1: unknown scope ''/)
    // A comment may end a line (`#` is in no key and no scope); spaces may follow the commas.
    expect(
      parseKeyFile(`${ADMIN}   # deploy bot\n${READER} read, write # CI\n${WRITER}\twrite#x\n`).map((k) => [
        k.key,
        [...k.scopes].sort().join(','),
      ]),
    ).to.deep.equal([
      [ADMIN, 'read,write'],
      [READER, 'read,write'],
      [WRITER, 'write'],
    ])
    // A key twice, even with other scopes, is refused naming both lines and never the key itself.
    for (const text of [`${READER} read\n# c\n${READER} write\n`, `${READER}\n\n${READER}\n`]) {
      expect(() => parseKeyFile(text)).to.throw(KeyFileError, /line 3: the same key as line 1/)
      try {
        parseKeyFile(text)
      } catch (error) {
        expect((error as Error).message).not.to.contain(READER)
      }
    }
  })
})
