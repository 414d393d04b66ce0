import {expect} from 'chai'
import fc from 'fast-check'
import {makeEvent, useTestApi} from '../support/harness.js'

const CODES = new Set([
  'invalid_json',
  'validation_error',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'tsa_unavailable',
  'storage_unavailable',
  'internal_error',
])

/** Every answer is a success or the contract's error body with a matching status; never a 500. */
function expectContractAnswer(res: {status: number; body: any; text: string}): void {
  expect(res.status, res.text).to.be.below(500)
  if (res.status >= 400) {
    expect(res.body, res.text).to.be.an('object')
    expect(Object.keys(res.body)).to.deep.equal(['error'])
    expect(CODES.has(res.body.error.code), res.text).to.equal(true)
    expect(res.body.error.message).to.be.a('string')
    expect(res.text).not.to.match(/\bat .*\.(ts|js):\d+/)
  }
}

describe('hardening against arbitrary input', function () {
  this.timeout(120_000)
  const api = useTestApi({app: {otlp: true}}, 'suite')

  async function recorded(): Promise<number> {
    return api.services.tree.size()
  }

  it(
    'answers arbitrary JSON on the ingest endpoints with 2xx or a contract error, recording only what it ' +
      'acknowledged',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.jsonValue(),
            fc.record({agent_id: fc.string(), action_type: fc.string(), action_name: fc.string()}, {requiredKeys: []}),
            fc.array(fc.jsonValue(), {maxLength: 5}),
          ),
          async (value) => {
            for (const path of ['/v1/events', '/v1/batch', '/v1/traces']) {
              const before = await recorded()
              const res = await api.request('POST', path, {
                raw: JSON.stringify(value),
                headers: {'content-type': 'application/json'},
              })
              expectContractAnswer(res)
              const acknowledged =
                path === '/v1/events'
                  ? res.status === 201
                    ? 1
                    : 0
                  : path === '/v1/batch'
                    ? Array.isArray(res.body)
                      ? res.body.filter((r: any) => r.status === 201).length
                      : 0
                    : (await recorded()) - before
              expect(await recorded()).to.equal(before + acknowledged)
            }
          },
        ),
        {numRuns: 150},
      )
    },
  )

  it('answers arbitrary bytes with 2xx or a contract error and records nothing invalid', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({maxLength: 300}),
        fc.constantFrom('application/json', 'application/x-protobuf', 'text/plain', 'application/octet-stream'),
        async (bytes, type) => {
          for (const path of ['/v1/events', '/v1/batch', '/v1/traces']) {
            const before = await recorded()
            const res = await api.request('POST', path, {raw: bytes, headers: {'content-type': type}})
            expectContractAnswer(res)
            if (path !== '/v1/traces' && res.status >= 400) expect(await recorded()).to.equal(before)
          }
        },
      ),
      {numRuns: 150},
    )
    const verify = await api.request('GET', '/v1/verify')
    expect(verify.body.valid).to.equal(true)
  })

  it('refuses a body that is not UTF-8 rather than storing U+FFFD in place of what was sent', async () => {
    const event = (name: string) =>
      Buffer.concat([
        Buffer.from('{"agent_id":"utf8-bot","action_type":"X","action_name":"'),
        Buffer.from(name, 'latin1'),
        Buffer.from('"}'),
      ])
    for (const bytes of [
      event('bad \xff\xfe'),
      event('cut \xc3'),
      event('overlong \xc0\xaf'),
      event('surrogate \xed\xa0\x80'),
    ]) {
      for (const [path, body] of [
        ['/v1/events', bytes],
        ['/v1/batch', Buffer.concat([Buffer.from('['), bytes, Buffer.from(']')])],
      ] as const) {
        const before = await recorded()
        const res = await api.request('POST', path, {raw: body, headers: {'content-type': 'application/json'}})
        expect(res.status, res.text).to.equal(400)
        expect(res.body.error).to.deep.equal({
          code: 'invalid_json',
          message: 'the request body is not valid UTF-8 (RFC 8259 section 8.1)',
        })
        expect(await recorded()).to.equal(before)
      }
    }
    // Valid UTF-8 of every length, U+FFFD itself included, is stored as sent.
    const text = 'naïve 東京 😀 \ufffd'
    const ok = await api.request('POST', '/v1/events', {
      raw: Buffer.from(JSON.stringify(makeEvent({action_name: text}))),
      headers: {'content-type': 'application/json; charset=UTF-8'},
    })
    expect(ok.status, ok.text).to.equal(201)
    expect(ok.body.action_name).to.equal(text)
    // JSON is UTF-8 (RFC 8259 section 8.1): another declared charset is refused, not misread.
    const latin1 = await api.request('POST', '/v1/events', {
      raw: event('caf\xe9'),
      headers: {'content-type': 'application/json; charset=iso-8859-1'},
    })
    expect(latin1.status).to.equal(415)
    expect(latin1.body.error).to.deep.equal({
      code: 'unsupported_media_type',
      message: 'charset iso-8859-1 is not supported: JSON is UTF-8 (RFC 8259 section 8.1)',
    })
  })

  it('stores prototype-pollution keys as plain data without changing object behaviour', async () => {
    const raw =
      '{"agent_id":"pp","action_type":"TOOL_CALL","action_name":"x","labels":{"__proto__":"a","constructor":"b"},' +
      '"input":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}},' +
      '"metadata":{"toString":"nope"}}'
    const res = await api.request('POST', '/v1/events', {raw, headers: {'content-type': 'application/json'}})
    expect(res.status, res.text).to.equal(201)
    expect(({} as any).polluted).to.equal(undefined)
    const stored = await api.request('GET', `/v1/events/${res.body.id}`)
    expect(stored.text).to.contain('"__proto__":{"polluted":true}')
    expect(Object.keys(stored.body.labels).sort()).to.deep.equal(['__proto__', 'constructor'])
    const filtered = await api.request('GET', '/v1/events?agent_id=pp&label.__proto__=a')
    expect(filtered.body.map((e: any) => e.id)).to.deep.equal([res.body.id])
    // The label filter on its own, beside events without that label: a key, not the prototype.
    expect(
      (await api.request('POST', '/v1/events', {body: makeEvent({agent_id: 'other', labels: {env: 'a'}})})).status,
    ).to.equal(201)
    const byLabel = await api.request('GET', '/v1/events?label.__proto__=a')
    expect(byLabel.body.map((e: any) => e.id)).to.deep.equal([res.body.id])
    expect(byLabel.headers.get('x-total-count')).to.equal('1')
    const none = await api.request('GET', '/v1/events?label.__proto__=nomatch')
    expect(none.body).to.deep.equal([])
    const exported = await api.request('GET', '/v1/export?label.__proto__=a')
    expect(exported.body.events.map((e: any) => e.id)).to.deep.equal([res.body.id])
    expect(exported.text).to.contain('"labels":{"__proto__":"a"}')
    expect((await api.request('GET', '/v1/verify?agent_id=pp')).body.valid).to.equal(true)
  })

  it('refuses oversized batches and over-deep JSON with clear errors', async () => {
    const before = await recorded()
    const deep = JSON.stringify(makeEvent({input: JSON.parse('['.repeat(300) + ']'.repeat(300))}))
    const deepRes = await api.request('POST', '/v1/events', {raw: deep, headers: {'content-type': 'application/json'}})
    expect(deepRes.status).to.equal(400)
    expect(deepRes.body.error.code).to.equal('validation_error')
    const big = JSON.stringify(Array.from({length: 900}, () => makeEvent({input: 'x'.repeat(20_000)})))
    const bigRes = await api.request('POST', '/v1/batch', {raw: big, headers: {'content-type': 'application/json'}})
    expect(bigRes.status).to.equal(413)
    expect(bigRes.body.error.code).to.equal('payload_too_large')
    const tooLong = await api.request('POST', '/v1/events', {body: makeEvent({agent_id: 'a'.repeat(257)})})
    expect(tooLong.status).to.equal(400)
    const labels = Object.fromEntries(Array.from({length: 65}, (_, i) => [`k${i}`, 'v']))
    expect((await api.request('POST', '/v1/events', {body: makeEvent({labels})})).status).to.equal(400)
    expect(await recorded()).to.equal(before)
  })
})

describe('connection limits', () => {
  it('drops a client that never finishes its headers', async () => {
    const {startService} = await import('../../src/server/start.js')
    const {tempDir, removeDir} = await import('../support/harness.js')
    const net = await import('node:net')
    const dir = await tempDir()
    const service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      limits: {headersTimeoutMs: 300, requestTimeoutMs: 300},
    })
    try {
      const port = Number(new URL(service.url).port)
      const socket = net.connect(port, '127.0.0.1')
      socket.write('GET /v1/events HTTP/1.1\r\nHost: x\r\n')
      const started = Date.now()
      const answer = await new Promise<string>((resolve) => {
        let data = ''
        socket.on('data', (d) => (data += d))
        socket.on('close', () => resolve(data))
      })
      expect(Date.now() - started).to.be.below(5000)
      expect(answer).to.match(/^HTTP\/1\.1 408/)
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).to.equal('validation_error')
    } finally {
      await service.close()
      await removeDir(dir)
    }
  })
})

describe('requests refused by the HTTP parser', () => {
  let service: {url: string; close(): Promise<void>}
  let dir: string
  before(async () => {
    const {startService} = await import('../../src/server/start.js')
    const {tempDir} = await import('../support/harness.js')
    dir = await tempDir()
    service = await startService({dataDir: dir, host: '127.0.0.1', port: 0})
  })
  after(async () => {
    const {removeDir} = await import('../support/harness.js')
    await service.close()
    await removeDir(dir)
  })

  /** Sends raw bytes and returns the status line and the parsed body of the answer. */
  async function raw(request: string): Promise<{head: string; body: any}> {
    const net = await import('node:net')
    const socket = net.connect(Number(new URL(service.url).port), '127.0.0.1')
    socket.write(request)
    const answer = await new Promise<string>((resolve) => {
      let data = ''
      socket.on('data', (d) => (data += d))
      socket.on('close', () => resolve(data))
    })
    const split = answer.indexOf('\r\n\r\n')
    expect(answer.slice(0, split)).to.match(/content-type: application\/json/i)
    return {head: answer.slice(0, answer.indexOf('\r\n')), body: JSON.parse(answer.slice(split + 4))}
  }

  it('answers a request head over 16 KiB with 431 and the contract error body', async () => {
    const {head, body} = await raw(`GET /v1/search?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(head).to.equal('HTTP/1.1 431 Request Header Fields Too Large')
    expect(body.error.code).to.equal('payload_too_large')
    expect(body.error.message).to.contain('16 KiB')
  })

  it('reads on and discards a refused chunked body, so that the connection serves the next request', async () => {
    const http = await import('node:http')
    const agent = new http.Agent({keepAlive: true, maxSockets: 1})
    const post = (chunks: string[]) =>
      new Promise<{status?: number; connection?: string; body: string}>((resolve, reject) => {
        const req = http.request(
          `${service.url}/v1/events`,
          {method: 'POST', agent, headers: {'content-type': 'application/json', 'transfer-encoding': 'chunked'}},
          (res) => {
            let body = ''
            res.on('data', (d) => (body += d))
            res.on('end', () => resolve({status: res.statusCode, connection: res.headers.connection, body}))
          },
        )
        req.on('error', reject)
        for (const chunk of chunks) req.write(chunk)
        req.end()
      })
    try {
      // 2.5 MiB in 64 KiB chunks, over the 1 MiB a single event may be.
      const tooLarge = await post([
        '{"agent_id":"a","action_type":"X","action_name":"n","input":"',
        ...Array.from({length: 40}, () => 'x'.repeat(64 * 1024)),
        '"}',
      ])
      expect(tooLarge.status).to.equal(413)
      expect(JSON.parse(tooLarge.body).error.code).to.equal('payload_too_large')
      expect(tooLarge.connection).to.equal('keep-alive')
      // The pool's next request goes on the same connection instead of failing with ECONNRESET.
      const next = await post(['{"agent_id":"a","action_type":"X","action_name":"n"}'])
      expect(next.status).to.equal(201)
      expect(next.connection).to.equal('keep-alive')
    } finally {
      agent.destroy()
    }
  })

  it('answers a malformed header line with 400 and the contract error body', async () => {
    const {head, body} = await raw('GET /v1/events HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n')
    expect(head).to.equal('HTTP/1.1 400 Bad Request')
    expect(body).to.deep.equal({error: {code: 'validation_error', message: 'the request is not valid HTTP/1.1'}})
  })
})
