/**
 * Forwarding by real `serve` processes: `kill -9` mid-stream and a webhook down for a while lose
 * nothing (duplicates only around the kill), and two processes on one PostgreSQL database send to
 * a destination one at a time, the second taking over within seconds when the first dies.
 */
import {expect} from 'chai'
import {runCli, startServe} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {postgresPerTest} from '../support/stores.js'
import {ndjsonEvents, startHttpReceiver, waitFor, type HttpReceiver} from '../services/forwarding/receivers.js'

type Server = Awaited<ReturnType<typeof startServe>>

async function postBatch(url: string, from: number, count: number): Promise<void> {
  const body = Array.from({length: count}, (_, i) => ({
    agent_id: `agent-${(from + i) % 3}`,
    action_type: 'TOOL_CALL',
    action_name: `step_${from + i}`,
  }))
  const response = await fetch(`${url}/v1/batch`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(body),
  })
  expect(response.status).to.equal(201)
}

async function storedEvents(url: string, total: number): Promise<any[]> {
  const events: any[] = []
  while (events.length < total)
    events.push(...(await (await fetch(`${url}/v1/events?limit=1000&offset=${events.length}`)).json()))
  return events
}

/** Every index below `total` arrived, each as stored; duplicates only of one stretch no longer than a batch. */
function expectComplete(received: any[], stored: any[]): void {
  const first = new Map<number, any>()
  const duplicates: number[] = []
  for (const event of received) {
    if (first.has(event.index)) duplicates.push(event.index)
    else first.set(event.index, event)
  }
  expect(first.size).to.equal(stored.length)
  for (const event of stored) expect(first.get(event.index), `index ${event.index}`).to.deep.equal(event)
  const order = [...first.keys()]
  expect(order).to.deep.equal([...order].sort((a, b) => a - b))
  if (duplicates.length > 0) expect(Math.max(...duplicates) - Math.min(...duplicates)).to.be.below(500)
}

describe('forwarding from serve processes (kill -9, receiver outage, several processes)', function () {
  this.timeout(120_000)
  let receiver: HttpReceiver
  let servers: Server[] = []

  beforeEach(async () => {
    receiver = await startHttpReceiver()
  })
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGKILL').catch(() => undefined)))
    servers = []
    await receiver.close()
  })

  it('kill -9 mid-stream and a webhook down for a while: every event arrives, in order', async () => {
    const dir = await tempDir()
    try {
      const flags = ['--data-dir', dir, '--forward', `${receiver.url}/hook`]
      let server = await startServe(flags)
      servers.push(server)
      // A slow destination, so that the kill comes while forwarding is under way.
      receiver.delayMs = 300
      let sent = 0
      for (; sent < 1000; sent += 100) await postBatch(server.url, sent, 100)
      const midway = await waitFor(async () => {
        const [destination] = (await (await fetch(`${server.url}/v1/forwarding`)).json()).destinations
        return destination.trails[0].position > 0 && destination.trails[0].position
      }, 'the first batch taken')
      expect(midway).to.be.below(1000)
      await server.stop('SIGKILL')
      receiver.delayMs = 0
      server = await startServe(flags)
      servers.push(server)
      receiver.answer = () => 503
      for (; sent < 1500; sent += 100) await postBatch(server.url, sent, 100)
      // Until the new process has met the outage (it first sends what the killed one had not).
      await waitFor(async () => {
        const [destination] = (await (await fetch(`${server.url}/v1/forwarding`)).json()).destinations
        return destination.state === 'retrying'
      }, 'the destination retrying')
      const status = await runCli(['forwarding', 'status', '--server', server.url])
      expect(status.stdout).to.match(/retrying/)
      expect(status.stdout).to.match(/HTTP 503/)
      receiver.answer = () => 200
      await waitFor(() => new Set(ndjsonEvents(receiver).map((e) => e.index)).size >= 1500, '1500 events', 60_000)
      expectComplete(ndjsonEvents(receiver), await storedEvents(server.url, 1500))
      await server.stop()
      // On the data directory, with no serve running, the stored position.
      const stored = await runCli(['forwarding', 'status', '--data-dir', dir, '--json'])
      expect(stored.code, stored.stderr).to.equal(0)
      const [destination] = JSON.parse(stored.stdout).destinations
      expect(destination).to.include({url: `${receiver.url}/hook`, kind: 'webhook', state: 'not_running'})
      expect(destination.trails[0]).to.include({trail: 'default', position: 1500, lag_events: 0})
    } finally {
      await removeDir(dir)
    }
  })

  it('refuses a malformed --forward URL or an unknown scheme at start-up, naming the flag (exit 2)', async () => {
    for (const url of ['nope', 'gopher://siem.example:70', 'syslog+tcp://siem.example:514/path']) {
      const result = await runCli(['serve', '--port', '0', '--data-dir', '/nonexistent/never', '--forward', url])
      expect(result.code, url).to.equal(2)
      expect(result.stderr, url).to.match(/^Error: --forward /)
    }
    for (const [flags, message] of [
      [['--forward-ca', '/nonexistent/ca.pem'], /^Error: cannot use --forward-ca \/nonexistent\/ca\.pem: /],
      [['--forward-filter', 'agent_id=a', '--forward-filter', 'agent_id=b'], /1 --forward but 2 --forward-filter/],
    ] as const) {
      const result = await runCli(['serve', '--port', '0', '--forward', 'syslog+tls://siem.example', ...flags])
      expect(result.code, flags.join(' ')).to.equal(2)
      expect(result.stderr).to.match(message)
    }
    const header = await runCli(['serve', '--port', '0', '--forward', 'http://x.example', '--forward-header', 'oops'])
    expect(header.code).to.equal(2)
    expect(header.stderr).to.match(/--forward-header without a colon: must be 'Name: value'/)
  })

  describe('two serve processes on one PostgreSQL database', function () {
    const fresh = postgresPerTest(async () => {
      await Promise.all(servers.map((server) => server.stop('SIGKILL').catch(() => undefined)))
      servers = []
    })

    it('one sends to the destination at a time; the other takes over within seconds of a kill -9', async () => {
      const start = async (name: string) => {
        const args = ['--data-dir', fresh.dir, '--database-url', fresh.url, '--forward', `${receiver.url}/hook`]
        const server = await startServe([...args, '--forward-header', `X-Sender: ${name}`])
        servers.push(server)
        return server
      }
      const a = await start('a')
      const b = await start('b')
      for (let sent = 0; sent < 300; sent += 50) await postBatch(sent % 100 === 0 ? a.url : b.url, sent, 50)
      await waitFor(() => ndjsonEvents(receiver).length >= 300, '300 events')
      const senders = new Set(receiver.requests.map((request) => request.headers['x-sender']))
      expect(senders.size, [...senders].join()).to.equal(1)
      const [first] = senders
      const [dying, surviving] = first === 'a' ? [a, b] : [b, a]
      // Both answer from the stored position; the one that does not send stands by.
      await waitFor(async () => {
        const [standing] = (await (await fetch(`${surviving.url}/v1/forwarding`)).json()).destinations
        return standing.state === 'standby' && standing.trails[0].position === 300
      }, 'the other process standing by at position 300')
      await dying.stop('SIGKILL')
      const killedAt = Date.now()
      await postBatch(surviving.url, 300, 50)
      await waitFor(() => ndjsonEvents(receiver).length >= 350, 'the events after the kill', 30_000)
      expect(Date.now() - killedAt).to.be.below(15_000)
      const later = receiver.requests.slice(-1)[0]!
      expect(later.headers['x-sender']).to.equal(first === 'a' ? 'b' : 'a')
      expectComplete(ndjsonEvents(receiver), await storedEvents(surviving.url, 350))
      const stored = await runCli(['forwarding', 'status', '--database-url', fresh.url, '--json'])
      expect(stored.code, stored.stderr).to.equal(0)
      expect(JSON.parse(stored.stdout).destinations[0].trails[0]).to.include({position: 350, lag_events: 0})
    })
  })
})
