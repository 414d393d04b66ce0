/** The stream of each trail (`/v1/trails/NAME/stream`, docs/api.md "Trails") on a running service. */
import {expect} from 'chai'
import WebSocket from 'ws'
import {parseKeyFile} from '../../../src/core/auth/keys.js'
import {startService, type RunningService} from '../../../src/server/start.js'
import {makeEvent, removeDir, tempDir} from '../../support/harness.js'

const ADMIN = 'stream-admin-key-0123456789abc'
const BOUND = 'stream-bound-key-0123456789abc'

describe('a stream per trail', function () {
  this.timeout(30_000)
  let dir: string
  let service: RunningService
  before(async () => {
    dir = await tempDir()
    service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      apiKeys: parseKeyFile(`${ADMIN} read,write,admin\n${BOUND} read,write trail=payments\n`),
    })
    await post('/v1/trails', {name: 'payments'})
  })
  after(async () => {
    await service.close()
    await removeDir(dir)
  })

  async function post(path: string, body: unknown, key = ADMIN): Promise<void> {
    const response = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${key}`},
      body: JSON.stringify(body),
    })
    expect(response.status, await response.text()).to.equal(201)
  }

  /** Opens the stream at `path`; resolves with its messages, or rejects with the refusal's status. */
  function open(path: string, key: string): Promise<{messages: any[]; ws: WebSocket}> {
    const ws = new WebSocket(`${service.url.replace('http', 'ws')}${path}?access_token=${key}`)
    const messages: any[] = []
    ws.on('message', (data) => messages.push(JSON.parse(String(data))))
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve({messages, ws}))
      ws.once('unexpected-response', (_request, response) => reject(new Error(String(response.statusCode))))
    })
  }

  it("sends only the trail's own events, and the key's trail on /v1/stream", async () => {
    const payments = await open('/v1/trails/payments/stream', ADMIN)
    const unprefixed = await open('/v1/stream', BOUND)
    const everyDefault = await open('/v1/stream', ADMIN)
    await post('/v1/events', makeEvent({agent_id: 'on-default'}))
    await post('/v1/trails/payments/events', makeEvent({agent_id: 'on-payments'}))
    const events = (stream: {messages: any[]}) =>
      stream.messages.filter((m) => m.type === 'event').map((m) => m.event.agent_id)
    const deadline = Date.now() + 10_000
    while (events(payments).length + events(unprefixed).length + events(everyDefault).length < 3) {
      if (Date.now() > deadline) throw new Error('the events did not arrive')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(events(payments)).to.deep.equal(['on-payments'])
    expect(events(unprefixed)).to.deep.equal(['on-payments'])
    expect(events(everyDefault)).to.deep.equal(['on-default'])
    for (const stream of [payments, unprefixed, everyDefault]) stream.ws.close()
  })

  it('refuses an unknown trail and one the key is not bound to with 404', async () => {
    for (const [path, key] of [
      ['/v1/trails/nowhere/stream', ADMIN],
      ['/v1/trails/default/stream', BOUND],
    ] as const) {
      let refused = ''
      await open(path, key).then(
        ({ws}) => ws.close(),
        (error: Error) => (refused = error.message),
      )
      expect(refused, path).to.equal('404')
    }
  })
})
