import {expect} from 'chai'
import WebSocket from 'ws'
import {verifyInclusion} from '../../src/core/merkle/index.js'
import {runCli, startServe} from '../support/cli.js'
import {postgresPerTest} from '../support/stores.js'

type Server = Awaited<ReturnType<typeof startServe>>

async function post(url: string, path: string, body: unknown): Promise<{status: number; body: any}> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(body),
  })
  return {status: response.status, body: await response.json()}
}

async function get(url: string, path: string): Promise<any> {
  const response = await fetch(`${url}${path}`)
  expect(response.status, path).to.equal(200)
  return response.json()
}

/** The messages of one stream subscriber, as they arrive. */
async function subscribe(url: string): Promise<{messages: any[]; close(): void}> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream`)
  const messages: any[] = []
  ws.on('message', (data) => messages.push(JSON.parse(String(data))))
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  return {messages, close: () => ws.close()}
}

const timestampsOf = (messages: any[]) => messages.filter((m) => m.type === 'timestamp').map((m) => m.timestamp)

const event = (agent: string, n: number, id?: string) => ({
  ...(id === undefined ? {} : {id}),
  agent_id: agent,
  action_type: 'TOOL_CALL',
  action_name: `step_${n}`,
  input: {n},
})

describe('several serve processes on one PostgreSQL database', function () {
  let servers: Server[] = []

  const fresh = postgresPerTest(async () => {
    await Promise.all(servers.map((server) => server.stop().catch(() => undefined)))
    servers = []
  })

  async function start(count: number): Promise<Server[]> {
    // One at a time: the first creates the schema (the others would wait on its lock anyway).
    for (let i = 0; i < count; i++)
      servers.push(await startServe(['--data-dir', fresh.dir, '--database-url', fresh.url]))
    return servers
  }

  for (const count of [2, 3]) {
    it(
      `${count} processes: concurrent single and batch ingest makes one gap-free log with valid chains, one root ` +
        `and the same proofs`,
      async () => {
        const processes = await start(count)
        const agents = ['alpha', 'beta', 'gamma', 'delta']
        const work: Promise<{status: number; body: any}>[] = []
        for (let round = 0; round < 15; round++) {
          for (const [p, server] of processes.entries()) {
            const agent = agents[(round + p) % agents.length]!
            work.push(post(server.url, '/v1/events', event(agent, round)))
            work.push(
              post(server.url, '/v1/batch', [
                event(agent, round),
                event(agents[(round + p + 1) % agents.length]!, round),
              ]),
            )
          }
        }
        const answers = await Promise.all(work)
        expect(
          answers.every((a) => a.status === 201),
          JSON.stringify(answers.find((a) => a.status !== 201)),
        ).to.equal(true)
        const total = count * 15 * 3

        const indexes: number[] = []
        for (const a of answers)
          for (const e of Array.isArray(a.body) ? a.body.map((r: any) => r.event) : [a.body]) indexes.push(e.index)
        expect(indexes.sort((x, y) => x - y)).to.deep.equal(Array.from({length: total}, (_, i) => i))

        const roots = await Promise.all(processes.map((server) => get(server.url, '/v1/merkle/root')))
        for (const root of roots) expect(root).to.include({tree_size: total, merkle_root: roots[0].merkle_root})
        const verified = await get(processes[count - 1]!.url, '/v1/verify')
        expect(verified.valid, JSON.stringify(verified)).to.equal(true)

        // An event ingested by the first process, proved by every process against the same root.
        const someone = answers[0]!.body
        const proofs = await Promise.all(processes.map((server) => get(server.url, `/v1/merkle/proof/${someone.id}`)))
        for (const proof of proofs) {
          expect(proof).to.deep.equal(proofs[0])
          expect(proof.merkle_root).to.equal(roots[0].merkle_root)
          verifyInclusion(
            proof.leaf_index,
            proof.tree_size,
            Buffer.from(proof.leaf_hash, 'hex'),
            proof.audit_path.map((h: string) => Buffer.from(h, 'hex')),
            Buffer.from(proof.merkle_root, 'hex'),
          )
        }
      },
    )
  }

  it('right after an ingest on either process, both answer the same root, proofs and tiles for it', async () => {
    const [a, b] = await start(2)
    let previous = 0
    for (const [n, [writer, reader]] of [
      [a!, b!],
      [b!, a!],
      [a!, b!],
      [b!, a!],
    ].entries()) {
      const answer = await post(
        writer.url,
        '/v1/batch',
        Array.from({length: 150}, (_, i) => event(`agent-${n}`, i)),
      )
      expect(answer.status).to.equal(201)
      const last = answer.body[149].event
      // The other process holds nothing per event: it answers from the tiles the writer committed.
      const [mine, theirs] = await Promise.all(
        [writer, reader].map((server) => get(server.url, `/v1/merkle/proof/${last.id}`)),
      )
      expect(theirs).to.deep.equal(mine)
      expect(theirs.tree_size).to.equal(last.index + 1)
      verifyInclusion(
        theirs.leaf_index,
        theirs.tree_size,
        Buffer.from(theirs.leaf_hash, 'hex'),
        theirs.audit_path.map((h: string) => Buffer.from(h, 'hex')),
        Buffer.from(theirs.merkle_root, 'hex'),
      )
      const path = `/v1/merkle/consistency?first=${previous}&second=${theirs.tree_size}`
      expect(await get(reader.url, path)).to.deep.equal(await get(writer.url, path))
      const tiles = await Promise.all(
        [writer, reader].map(async (server) =>
          Buffer.from(await (await fetch(`${server.url}/tlog/tile/0/000`)).arrayBuffer()),
        ),
      )
      expect(tiles[1]).to.deep.equal(tiles[0])
      previous = theirs.tree_size
    }
  })

  it('a WebSocket subscriber of one process receives, in index order, the events posted to the others', async () => {
    const [a, b, c] = await start(3)
    await post(b!.url, '/v1/events', event('before', 0))
    const ws = new WebSocket(`${a!.url.replace('http', 'ws')}/v1/stream?from_index=0`)
    const received: number[] = []
    ws.on('message', (data) => {
      const message = JSON.parse(String(data))
      if (message.type === 'event') received.push(message.event.index)
    })
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    const work: Promise<unknown>[] = []
    for (let i = 0; i < 10; i++)
      work.push(post(b!.url, '/v1/batch', [event('b', i), event('b', i)]), post(c!.url, '/v1/events', event('c', i)))
    await Promise.all(work)
    for (let waited = 0; received.length < 31 && waited < 200; waited++) await new Promise((r) => setTimeout(r, 50))
    ws.close()
    expect(received).to.deep.equal(Array.from({length: 31}, (_, i) => i))
  })

  it('a process killed with SIGKILL mid-ingest loses no acknowledged event and leaves no gap', async () => {
    const [survivor, victim] = await start(2)
    const acknowledged = new Set<string>()
    let stop = false
    const writer = async (url: string, agent: string) => {
      for (let n = 0; !stop; n++) {
        try {
          const answer = await post(url, '/v1/batch', [event(agent, n), event(agent, n)])
          if (answer.status === 201) for (const r of answer.body) acknowledged.add(r.event.id)
        } catch {
          return // the connection to the killed process
        }
      }
    }
    const writers = [
      writer(survivor!.url, 's1'),
      writer(survivor!.url, 's2'),
      writer(victim!.url, 'v1'),
      writer(victim!.url, 'v2'),
    ]
    while (acknowledged.size < 200) await new Promise((r) => setTimeout(r, 20))
    await victim!.stop('SIGKILL')
    servers = [survivor!]
    await new Promise((r) => setTimeout(r, 200))
    stop = true
    await Promise.all(writers)

    const stats = await get(survivor!.url, '/v1/stats')
    const events: {id: string; index: number}[] = []
    for (let offset = 0; offset < stats.total_events; offset += 1000)
      events.push(...(await get(survivor!.url, `/v1/events?limit=1000&offset=${offset}`)))
    expect(events.map((e) => e.index)).to.deep.equal(Array.from({length: stats.total_events}, (_, i) => i))
    const stored = new Set(events.map((e) => e.id))
    for (const id of acknowledged) expect(stored.has(id), id).to.equal(true)
    expect((await get(survivor!.url, '/v1/verify')).valid).to.equal(true)
    // The survivor goes on writing after the index the killed process may have left.
    expect((await post(survivor!.url, '/v1/events', event('after', 1))).body.index).to.equal(stats.total_events)
  })

  it('a timestamp issued by one process reaches the stream subscribers of every process, once', async () => {
    const [a, b] = await start(2)
    const subscribers = [await subscribe(a!.url), await subscribe(b!.url)]
    await post(a!.url, '/v1/events', event('stamped', 1))
    const issued = await post(b!.url, '/v1/timestamp', {})
    expect(issued.status).to.equal(201)
    const {token: _token, ...announced} = issued.body
    for (let waited = 0; waited < 100 && subscribers.some((s) => timestampsOf(s.messages).length === 0); waited++) {
      await new Promise((r) => setTimeout(r, 50))
    }
    // Long enough for a second (duplicate) announcement to arrive too.
    await new Promise((r) => setTimeout(r, 300))
    for (const subscriber of subscribers) {
      subscriber.close()
      expect(timestampsOf(subscriber.messages)).to.deep.equal([announced])
    }
  })

  it('--timestamp-every on two processes: one timestamp per period, not one per process', async () => {
    const every = ['--data-dir', fresh.dir, '--database-url', fresh.url, '--timestamp-every', '1s']
    for (let i = 0; i < 2; i++) servers.push(await startServe(every))
    const subscribers = await Promise.all(servers.map((server) => subscribe(server.url)))
    // Nothing to timestamp before the first event: every timestamp is issued from here on.
    const began = Date.now()
    const deadline = Date.now() + 5000
    for (let written = 0; Date.now() < deadline; written++) {
      await post(servers[written % 2]!.url, '/v1/events', event('ticking', written))
      await new Promise((r) => setTimeout(r, 50))
    }
    // The root stops changing: at most one more timestamp, within a period.
    await new Promise((r) => setTimeout(r, 2500))
    const listed: {timestamp: string; tree_size: number}[] = await get(servers[0]!.url, '/v1/timestamps')
    // Every process's subscribers hear of every timestamp, whichever process issued it.
    for (const subscriber of subscribers) {
      subscriber.close()
      expect(timestampsOf(subscriber.messages)).to.deep.equal(listed)
    }
    // Turns are at least 0.9 periods apart; two processes each issuing every period would make
    // about twice as many.
    expect(listed.length).to.be.greaterThan(1)
    expect(listed.length, JSON.stringify(listed)).to.be.at.most(Math.floor((Date.now() - began) / 900) + 1)
  })

  it('stores an id retried on two processes at once once, answering 201 and 200', async () => {
    const [a, b] = await start(2)
    const id = '0190c000-0000-7000-8000-000000000001'
    const answers = await Promise.all([
      post(a!.url, '/v1/events', event('retry', 1, id)),
      post(b!.url, '/v1/events', event('retry', 1, id)),
    ])
    expect(answers.map((x) => x.status).sort()).to.deep.equal([200, 201])
    expect(answers[0]!.body).to.deep.equal(answers[1]!.body)
    const stats = await get(a!.url, '/v1/stats')
    expect(stats.total_events).to.equal(1)
  })

  it('the CLI reads the same database (--database-url), and a wrong database is one sentence, exit 2', async () => {
    const [server] = await start(1)
    await post(server!.url, '/v1/batch', [event('cli', 1), event('cli', 2)])
    const listed = await runCli(['events', 'list', '--json', '--data-dir', fresh.dir, '--database-url', fresh.url])
    expect(listed.code, listed.stderr).to.equal(0)
    expect(JSON.parse(listed.stdout)).to.have.length(2)
    const wrong = new URL(fresh.url)
    wrong.pathname = '/atrail_test_does_not_exist'
    const refused = await runCli(['stats', '--data-dir', fresh.dir, '--database-url', wrong.toString()])
    expect(refused.code).to.equal(2)
    expect(refused.stderr.trim().split('\n')).to.have.length(1)
    expect(refused.stderr).to.match(/^Error: cannot use the database .*atrail_test_does_not_exist/)
  })
})
