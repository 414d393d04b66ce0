/**
 * Every subscriber's memory is bounded, replay included (issue 24, item 2): clients that upgrade
 * to /v1/stream?from_index=0 and then never read cost the server a bounded amount, /healthz keeps
 * answering, and each such client is closed with 1013 in bounded time.
 */
import {expect} from 'chai'
import {randomBytes} from 'node:crypto'
import net from 'node:net'
import v8 from 'node:v8'
import vm from 'node:vm'
import WebSocket from 'ws'
import {startService, type RunningService} from '../../src/server/start.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

/** What the process holds: the JS heap and the buffers outside it (socket buffers are Buffers). */
function heldBytes(): number {
  gc()
  const {heapUsed, external} = process.memoryUsage()
  return heapUsed + external
}

/** A client that completes the WebSocket upgrade, then never reads another byte. */
function silentSubscriber(url: string, path: string): Promise<net.Socket> {
  const {port} = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    socket.once('error', reject)
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    )
    socket.once('data', (chunk) => {
      socket.pause()
      if (chunk.toString('latin1').startsWith('HTTP/1.1 101')) resolve(socket)
      else reject(new Error(`upgrade refused: ${chunk.toString('latin1').split('\r\n')[0]}`))
    })
  })
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const MiB = 1024 * 1024

describe('GET /v1/stream: bounded replay', function () {
  this.timeout(120_000)
  let dir: string
  let service: RunningService
  const sockets: net.Socket[] = []
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy()
    await service.close()
    await removeDir(dir)
  })

  async function start(
    stream: Parameters<typeof startService>[0]['stream'],
    events: number,
    eventBytes = 1000,
  ): Promise<void> {
    dir = await tempDir()
    service = await startService({dataDir: dir, host: '127.0.0.1', port: 0, stream})
    for (let done = 0; done < events; done += 1000) {
      await service.services.ingest.recordBatch(
        Array.from({length: 1000}, (_, i) => makeEvent({agent_id: `a${i % 7}`, input: 'x'.repeat(eventBytes)})),
      )
    }
  }

  it('100 replay subscribers that never read: memory within 64 MiB, /healthz answers', async () => {
    // 3,000 events of 3 kB: a replay of 9 MB, more than the kernel buffers of a socket take in.
    await start({}, 3000, 3000)
    const before = heldBytes()
    for (let i = 0; i < 100; i++) sockets.push(await silentSubscriber(service.url, '/v1/stream?from_index=0'))
    // The replays run until the sockets' buffers are full; sample what the server holds meanwhile.
    let most = 0
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      most = Math.max(most, heldBytes() - before)
    }
    // 16 replays at once, each at most 8 events read and about 1 MiB handed to its socket; the
    // others wait holding nothing. Without the bounds each held its whole scan batch (~1 GB here).
    expect(most).to.be.below(64 * MiB)
    // Generous for a loaded test machine; without the bounds it did not answer within 10 s.
    const health = await fetch(`${service.url}/healthz`, {signal: AbortSignal.timeout(5000)})
    expect(health.status).to.equal(200)
  })

  it('a replay past the waiting bound is closed with 1013; waiting ones replay in turn, complete', async () => {
    await start({maxReplays: 1, maxWaitingReplays: 1}, 1000)
    sockets.push(await silentSubscriber(service.url, '/v1/stream?from_index=0'))
    const waiting = new WebSocket(`${service.url.replace('http', 'ws')}/v1/stream?from_index=0`)
    let received = 0
    waiting.on('message', (data) => String(data).startsWith('{"type":"event"') && received++)
    await new Promise((resolve) => waiting.once('open', resolve))
    const refused = new WebSocket(`${service.url.replace('http', 'ws')}/v1/stream?from_index=0`)
    const code = await new Promise<number>((resolve) => refused.once('close', resolve))
    expect(code).to.equal(1013)
    // The silent one holds the only slot: the waiting one gets it once the silent one is closed.
    sockets.splice(0).forEach((socket) => socket.destroy())
    await waitFor(() => received === 1000, 30_000, 'the waiting replay')
    waiting.close()
  })

  it('a subscriber that does not answer pings is closed with 1013 at the next heartbeat, and let go', async () => {
    await start({heartbeatMs: 300}, 1000)
    // Listeners of the feed other than stream subscribers (the policy service's header cache).
    const others = service.services.feed.listenerCount('events')
    const mute = new WebSocket(`${service.url.replace('http', 'ws')}/v1/stream?from_index=0`, {autoPong: false})
    const code = new Promise<number>((resolve) => mute.once('close', resolve))
    expect(await code).to.equal(1013)
    for (let i = 0; i < 5; i++) sockets.push(await silentSubscriber(service.url, '/v1/stream?from_index=0'))
    // Each silent client's subscription ends (its feed listener goes) though it never reads the close.
    await waitFor(
      () => service.services.feed.listenerCount('events') === others,
      30_000,
      'the silent subscribers to be let go',
    )
  })
})
