/**
 * Destinations that misbehave: an answer that is not HTTP, a connection closed mid-message, a
 * receiver that never answers. Each is retried and reported; the service keeps serving and the
 * position stays until a batch is taken.
 */
import {expect} from 'chai'
import net from 'node:net'
import {startService, type RunningService} from '../../../src/server/start.js'
import {openAudit} from '../../../src/services/audit.js'
import {parseDestination} from '../../../src/services/forwarding/index.js'
import {removeDir, tempDir} from '../../support/harness.js'
import {waitFor} from './receivers.js'

type Behaviour = (socket: net.Socket) => void

const behaviours: Record<string, Behaviour> = {
  'answers garbage': (socket) => socket.once('data', () => socket.end('HELLO THERE\r\n\r\n')),
  'closes mid-message': (socket) => socket.once('data', () => socket.destroy()),
  'closes half-way through its status line': (socket) => socket.once('data', () => socket.end('HTTP/1.1 2')),
}

describe('forwarding to a destination that misbehaves', function () {
  this.timeout(30_000)
  let dir: string
  let service: RunningService | undefined
  let server: net.Server | undefined

  beforeEach(async () => {
    dir = await tempDir()
  })
  afterEach(async () => {
    await service?.close()
    service = undefined
    server?.close()
    await removeDir(dir)
  })

  it('stops at once, keeping its place, while a webhook that never answers holds a request', async () => {
    let requests = 0
    server = net.createServer((socket) => socket.once('data', () => requests++))
    server.listen(0, '127.0.0.1')
    await new Promise((resolve) => server!.once('listening', resolve))
    const {port} = server.address() as net.AddressInfo
    service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      forwarding: {destinations: [parseDestination(`http://127.0.0.1:${port}/hook`)], onError: () => undefined},
    })
    const response = await fetch(`${service.url}/v1/events`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({agent_id: 'a', action_type: 'TOOL_CALL', action_name: 'x'}),
    })
    expect(response.status).to.equal(201)
    await waitFor(() => requests > 0, 'the request held')
    const stopping = Date.now()
    await service.close()
    service = undefined
    expect(Date.now() - stopping).to.be.below(3000)
    // Nothing was taken: the event is sent again by the next start.
    const reopened = await openAudit({dataDir: dir})
    try {
      expect((await reopened.store.forwarding.list()).map((p) => p.position)).to.not.include(1)
    } finally {
      await reopened.close()
    }
  })

  for (const [name, behaviour] of Object.entries(behaviours)) {
    it(`retries a webhook that ${name}, reports it, and keeps its place and ingest`, async () => {
      // The forwarder drops the connection on a bad answer: the reset is expected here.
      server = net.createServer((socket) => behaviour(socket.on('error', () => undefined)))
      server.listen(0, '127.0.0.1')
      await new Promise((resolve) => server!.once('listening', resolve))
      const {port} = server.address() as net.AddressInfo
      const errors: string[] = []
      service = await startService({
        dataDir: dir,
        host: '127.0.0.1',
        port: 0,
        forwarding: {
          destinations: [parseDestination(`http://127.0.0.1:${port}/hook`)],
          retry: {initialMs: 20, maxMs: 50},
          onError: (message) => errors.push(message),
        },
      })
      const post = () =>
        fetch(`${service!.url}/v1/events`, {
          method: 'POST',
          headers: {'content-type': 'application/json'},
          body: JSON.stringify({agent_id: 'a', action_type: 'TOOL_CALL', action_name: 'x'}),
        })
      expect((await post()).status).to.equal(201)
      await waitFor(async () => {
        const [status] = await service!.forwarding.status()
        return status!.state === 'retrying' && status!.last_error !== null
      }, 'the failure reported')
      expect(errors[0]).to.match(/^forwarding to http:\/\/127\.0\.0\.1:\d+\/hook: POST /)
      // Ingest goes on, and the position waits for a destination that takes the batch.
      expect((await post()).status).to.equal(201)
      const [status] = await service.forwarding.status()
      expect(status!.trails[0]).to.include({position: 0, lag_events: 2})
      expect((await service.services.store.forwarding.list())[0]).to.include({position: 0})
    })
  }
})
