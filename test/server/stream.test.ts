import {expect} from 'chai'
import WebSocket from 'ws'
import {startService, type RunningService} from '../../src/server/start.js'
import {makeEvent} from '../support/harness.js'
import {forEachStore, useStore} from '../support/stores.js'

interface Message {
  type: string
  event?: {index: number; agent_id: string; action_type: string}
  tree_size?: number
  merkle_root?: string
  timestamp?: {tree_size: number}
}

/** Collects a subscriber's messages; `until` waits for a condition on them. */
function subscribe(
  url: string,
  query = '',
): Promise<{
  ws: WebSocket
  messages: Message[]
  closed: Promise<{code: number}>
  until(check: (m: Message[]) => boolean, ms?: number): Promise<void>
}> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream${query}`)
  const messages: Message[] = []
  ws.on('message', (data) => messages.push(JSON.parse(String(data))))
  const closed = new Promise<{code: number}>((resolve) => ws.on('close', (code) => resolve({code})))
  const until = async (check: (m: Message[]) => boolean, ms = 10_000) => {
    const deadline = Date.now() + ms
    while (!check(messages)) {
      if (Date.now() > deadline) throw new Error(`timed out; got ${messages.length} messages`)
      await new Promise((r) => setTimeout(r, 5))
    }
  }
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ws, messages, closed, until}))
    ws.once('error', reject)
  })
}

async function post(url: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(body),
  })
  return res.json()
}

const indexes = (messages: Message[]) => messages.filter((m) => m.type === 'event').map((m) => m.event!.index)

describe('GET /v1/stream', () =>
  forEachStore((store) => {
    let service: RunningService
    const place = useStore(store, async () => service?.close())
    const dir = place.dataDir
    beforeEach(async () => {
      service = await startService({...place, host: '127.0.0.1', port: 0, stream: {heartbeatMs: 1000}})
    })

    it('says hello with the tree, then sends every recorded event in index order', async () => {
      await post(service.url, '/v1/batch', [makeEvent(), makeEvent()])
      const sub = await subscribe(service.url)
      await sub.until((m) => m.length >= 1)
      expect(sub.messages[0]).to.include({type: 'hello', tree_size: 2})
      expect(sub.messages[0]!.merkle_root).to.match(/^[0-9a-f]{64}$/)
      await post(
        service.url,
        '/v1/batch',
        Array.from({length: 20}, (_, i) => makeEvent({action_name: `n${i}`})),
      )
      await post(service.url, '/v1/events', makeEvent())
      await sub.until((m) => indexes(m).length === 21)
      expect(indexes(sub.messages)).to.deep.equal(Array.from({length: 21}, (_, i) => i + 2))
      sub.ws.close()
    })

    it('filters by agent_id and action_type', async () => {
      const sub = await subscribe(service.url, '?agent_id=a&action_type=LLM_CALL')
      await post(service.url, '/v1/batch', [
        makeEvent({agent_id: 'a', action_type: 'LLM_CALL'}),
        makeEvent({agent_id: 'b', action_type: 'LLM_CALL'}),
        makeEvent({agent_id: 'a', action_type: 'TOOL_CALL'}),
        makeEvent({agent_id: 'a', action_type: 'LLM_CALL'}),
      ])
      await sub.until((m) => indexes(m).length === 2)
      await new Promise((r) => setTimeout(r, 50))
      expect(indexes(sub.messages)).to.deep.equal([0, 3])
      sub.ws.close()
    })

    it(
      'gives each of several live subscribers exactly its events of shared batches, whatever their size, between ' +
        'other messages',
      async () => {
        const subs = {
          all: await subscribe(service.url),
          agentA: await subscribe(service.url, '?agent_id=a'),
          agentBTool: await subscribe(service.url, '?agent_id=b&action_type=TOOL_CALL'),
          // A from_index ahead of the log: live events below it are not for this subscriber.
          fromThree: await subscribe(service.url, '?from_index=3'),
          alsoAll: await subscribe(service.url),
        }
        for (const sub of Object.values(subs)) await sub.until((m) => m.length >= 1)
        // Sizes across the three WebSocket length encodings: < 126, < 65,536 and 64-bit.
        const bodies = [
          makeEvent({agent_id: 'a'}),
          makeEvent({agent_id: 'b', action_type: 'TOOL_CALL', input: 'x'.repeat(70_000)}),
          makeEvent({agent_id: 'b', action_type: 'LLM_CALL'}),
          makeEvent({agent_id: 'a', input: 'y'.repeat(1000)}),
          makeEvent({agent_id: 'b', action_type: 'TOOL_CALL'}),
        ]
        await post(service.url, '/v1/batch', bodies)
        await post(service.url, '/v1/timestamp', undefined)
        await post(service.url, '/v1/batch', bodies)
        const expected = {
          all: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
          agentA: [0, 3, 5, 8],
          agentBTool: [1, 4, 6, 9],
          fromThree: [3, 4, 5, 6, 7, 8, 9],
          alsoAll: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        }
        for (const [name, sub] of Object.entries(subs)) {
          const want = expected[name as keyof typeof expected]
          await sub.until((m) => indexes(m).length >= want.length && m.some((x) => x.type === 'timestamp'))
          await new Promise((r) => setTimeout(r, 30))
          expect(indexes(sub.messages), name).to.deep.equal(want)
          // The timestamp message sits between the two batches, as it was issued.
          const types = sub.messages.map((m) => m.type)
          expect(types.indexOf('timestamp'), name).to.equal(1 + want.filter((i) => i < 5).length)
          const big = sub.messages.find((m) => m.event?.index === 1)
          if (big) expect((big.event as unknown as {input: string}).input).to.have.length(70_000)
          sub.ws.close()
        }
      },
    )

    it('replays from from_index and goes live with no gap and no duplicate while events arrive', async () => {
      for (let i = 0; i < 10; i++)
        await post(
          service.url,
          '/v1/batch',
          Array.from({length: 100}, () => makeEvent({agent_id: `agent-${i % 3}`})),
        )
      const writer = (async () => {
        for (let i = 0; i < 20; i++)
          await post(
            service.url,
            '/v1/batch',
            Array.from({length: 25}, () => makeEvent()),
          )
      })()
      const sub = await subscribe(service.url, '?from_index=5')
      await writer
      await sub.until((m) => indexes(m).length === 1500 - 5)
      await new Promise((r) => setTimeout(r, 50))
      expect(indexes(sub.messages)).to.deep.equal(Array.from({length: 1495}, (_, i) => i + 5))
      sub.ws.close()
    })

    it('sends timestamp messages', async () => {
      const sub = await subscribe(service.url)
      await post(service.url, '/v1/events', makeEvent())
      await post(service.url, '/v1/timestamp', undefined)
      await sub.until((m) => m.some((x) => x.type === 'timestamp'))
      expect(sub.messages.find((x) => x.type === 'timestamp')!.timestamp).to.include({tree_size: 1})
      sub.ws.close()
    })

    it('closes a subscriber too slow to keep up with 1013, and from_index resumes without loss', async () => {
      await service.close()
      service = await startService({
        dataDir: dir,
        host: '127.0.0.1',
        port: 0,
        stream: {maxQueuedEvents: 50, maxBufferedBytes: 4096},
      })
      const sub = await subscribe(service.url, '?from_index=0')
      // Pause reading: the socket's buffers fill and the server must give up on this subscriber.
      sub.ws.pause()
      for (let i = 0; i < 20; i++)
        await post(
          service.url,
          '/v1/batch',
          Array.from({length: 200}, () => makeEvent({input: 'x'.repeat(2000)})),
        )
      sub.ws.resume()
      const {code} = await sub.closed
      expect(code).to.equal(1013)
      const seen = indexes(sub.messages)
      const next = seen.length === 0 ? 0 : seen.at(-1)! + 1
      const resumed = await subscribe(service.url, `?from_index=${next}`)
      await resumed.until((m) => indexes(m).length === 4000 - next)
      expect([...seen, ...indexes(resumed.messages)]).to.deep.equal(Array.from({length: 4000}, (_, i) => i))
      resumed.ws.close()
    })

    it('refuses a bad from_index, a parameter given twice, and unknown upgrade paths', async () => {
      const refusal = (query: string) =>
        new Promise<{status: number; body: any}>((resolve) => {
          new WebSocket(`${service.url.replace('http', 'ws')}/v1/stream${query}`).on(
            'unexpected-response',
            (_req, res) => {
              let text = ''
              res.on('data', (chunk: Buffer) => (text += chunk))
              res.on('end', () => resolve({status: res.statusCode!, body: JSON.parse(text)}))
            },
          )
        })
      for (const [query, field, message] of [
        ['?from_index=-1', 'from_index', 'must be a non-negative integer'],
        ['?from_index=1.5', 'from_index', 'must be a non-negative integer'],
        // As GET /v1/events: which of two values would filter?
        ['?agent_id=a&agent_id=b', 'agent_id', 'must be given at most once'],
        ['?from_index=3&from_index=-5', 'from_index', 'must be given at most once'],
      ]) {
        const {status, body} = await refusal(query!)
        expect(status, query).to.equal(400)
        expect(body.error, query).to.deep.include({code: 'validation_error', details: [{field, message}]})
      }
      const other = new WebSocket(`${service.url.replace('http', 'ws')}/v1/elsewhere`)
      expect(
        await new Promise<number>((resolve) =>
          other.on('unexpected-response', (_req, res) => resolve(res.statusCode!)),
        ),
      ).to.equal(404)
      // A trailing slash names the stream, as it names the REST routes.
      const slash = await subscribe(service.url, '/?agent_id=a')
      await slash.until((m) => m.length >= 1)
      expect(slash.messages[0]).to.include({type: 'hello'})
      slash.ws.close()
    })

    it('answers a plain GET (no WebSocket upgrade) with 400 saying how to connect', async () => {
      const res = await fetch(`${service.url}/v1/stream?agent_id=a`)
      expect(res.status).to.equal(400)
      const body = (await res.json()) as {error: {code: string; message: string}}
      expect(body.error.code).to.equal('validation_error')
      expect(body.error.message).to.match(/WebSocket/)
    })
  }))
