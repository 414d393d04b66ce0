/**
 * Forwarding to a webhook and to an OTLP/HTTP logs receiver (in-process receivers), on both
 * stores: every event in index order exactly as recorded, retries on 5xx, a stop on 4xx shown in
 * GET /v1/forwarding, the stored position resumed after a restart, filters, and erasures.
 */
import {expect} from 'chai'
import {startService, type RunningService} from '../../../src/server/start.js'
import {parseDestination, type ForwardingOptions} from '../../../src/services/forwarding/index.js'
import {forEachStore, useStore} from '../../support/stores.js'
import {ndjsonEvents, otlpRecords, startHttpReceiver, waitFor, type HttpReceiver} from './receivers.js'

async function call(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {'content-type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  expect(response.status, await response.clone().text()).to.be.oneOf([200, 201])
  return response.json()
}

const event = (n: number, extra: Record<string, unknown> = {}) => ({
  agent_id: n % 2 === 0 ? 'billing-bot' : 'support-bot',
  action_type: 'TOOL_CALL',
  action_name: `step_${n}`,
  input: {n},
  ...extra,
})

const quick = {retry: {initialMs: 30, maxMs: 100}, onError: () => undefined}

forEachStore((store) => {
  describe('forwarding to a webhook and to OTLP/HTTP', function () {
    this.timeout(60_000)
    let receiver: HttpReceiver
    let service: RunningService | undefined
    const place = useStore(store, async () => {
      await service?.close()
      service = undefined
      await receiver.close()
    })
    beforeEach(async () => {
      receiver = await startHttpReceiver()
    })

    async function start(forwarding?: Omit<ForwardingOptions, 'store' | 'feed'>, otlp = false) {
      service = await startService({
        ...place,
        host: '127.0.0.1',
        port: 0,
        forwarding,
        app: {otlp},
      })
      return service
    }

    const webhook = (path = '/hook', filter = '') => parseDestination(`${receiver.url}${path}`, filter)
    const recorded = async (url: string) => call(url, 'GET', '/v1/events?limit=1000')

    it('POSTs NDJSON batches of every event, in index order, exactly as recorded, with --forward-header', async () => {
      const {url} = await start({destinations: [webhook()], headers: [['Authorization', 'Bearer s3cret']], ...quick})
      await call(
        url,
        'POST',
        '/v1/batch',
        Array.from({length: 30}, (_, n) => event(n)),
      )
      await call(url, 'POST', '/v1/events', event(30))
      await waitFor(() => ndjsonEvents(receiver).length >= 31, '31 events at the webhook')
      expect(ndjsonEvents(receiver)).to.deep.equal(await recorded(url))
      for (const request of receiver.requests) {
        expect(request.headers['content-type']).to.equal('application/x-ndjson')
        expect(request.headers.authorization).to.equal('Bearer s3cret')
        expect(request.headers['x-audit-trail-trail']).to.equal('default')
      }
      const {destinations} = await call(url, 'GET', '/v1/forwarding')
      expect(destinations).to.have.length(1)
      expect(destinations[0]).to.include({
        url: `${receiver.url}/hook`,
        kind: 'webhook',
        last_error: null,
        position: 31,
        lag_events: 0,
        lag_seconds: 0,
      })
      expect(destinations[0].trails).to.have.length(1)
      expect(destinations[0].trails[0]).to.include({trail: 'default', position: 31, lag_events: 0, lag_seconds: 0})
    })

    it('retries while the webhook answers 503, losing and reordering nothing', async () => {
      let refuse = true
      receiver.answer = () => (refuse ? 503 : 200)
      const {url} = await start({destinations: [webhook()], ...quick})
      await call(
        url,
        'POST',
        '/v1/batch',
        Array.from({length: 10}, (_, n) => event(n)),
      )
      // Between attempts the destination is retrying; during one it shows sending (docs/forwarding.md).
      const destinations = await waitFor(async () => {
        const shown = (await call(url, 'GET', '/v1/forwarding')).destinations
        return shown[0].last_error && shown[0].state === 'retrying' ? shown : undefined
      }, 'a failed send waiting for its retry')
      expect(destinations[0].last_error.message).to.match(/HTTP 503/)
      expect(destinations[0].trails[0]).to.include({position: 0, lag_events: 10})
      expect(destinations[0]).to.include({position: 0, lag_events: 10})
      expect(destinations[0].lag_seconds).to.be.greaterThan(0)
      await call(url, 'POST', '/v1/events', event(10))
      refuse = false
      await waitFor(() => ndjsonEvents(receiver).length >= 11, '11 events')
      expect(ndjsonEvents(receiver)).to.deep.equal(await recorded(url))
    })

    it('stops a webhook that answers 400, shows why, and keeps its position', async () => {
      receiver.answer = () => 400
      const {url} = await start({destinations: [webhook()], ...quick})
      await call(url, 'POST', '/v1/events', event(0))
      await waitFor(async () => (await call(url, 'GET', '/v1/forwarding')).destinations[0].state === 'stopped', 'stop')
      const [destination] = (await call(url, 'GET', '/v1/forwarding')).destinations
      expect(destination.last_error.message).to.match(/HTTP 400: refused with 400 \(refused: sending stopped/)
      expect(destination.trails[0]).to.include({position: 0, lag_events: 1})
      const stored = await service!.services.store.forwarding.list()
      expect(stored[0]).to.include({position: 0})
      expect(stored[0]!.last_error).to.match(/HTTP 400/)
    })

    it('resumes from the stored position after a restart: the events recorded meanwhile, none twice', async () => {
      await start({destinations: [webhook()], ...quick})
      await call(service!.url, 'POST', '/v1/batch', [event(0), event(1), event(2)])
      await waitFor(() => ndjsonEvents(receiver).length >= 3, '3 events')
      await service!.close()
      // Recorded while nothing forwards.
      await start()
      await call(service!.url, 'POST', '/v1/batch', [event(3), event(4)])
      await service!.close()
      const {url} = await start({destinations: [webhook()], ...quick})
      await waitFor(() => ndjsonEvents(receiver).length >= 5, '5 events')
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(ndjsonEvents(receiver)).to.deep.equal(await recorded(url))
    })

    it('sends only what --forward-filter selects, and moves past the rest', async () => {
      const {url} = await start({destinations: [webhook('/hook', 'agent_id=support-bot')], ...quick})
      await call(
        url,
        'POST',
        '/v1/batch',
        Array.from({length: 8}, (_, n) => event(n)),
      )
      await waitFor(
        async () => (await call(url, 'GET', '/v1/forwarding')).destinations[0].trails[0].position === 8,
        'position 8',
      )
      expect(ndjsonEvents(receiver).map((e) => e.action_name)).to.deep.equal(['step_1', 'step_3', 'step_5', 'step_7'])
      expect((await call(url, 'GET', '/v1/forwarding')).destinations[0].filter).to.equal('agent_id=support-bot')
    })

    it('sends an event erased before it was sent as erased: its payload never leaves', async () => {
      let refuse = true
      receiver.answer = () => (refuse ? 503 : 200)
      const {url} = await start({destinations: [webhook()], ...quick})
      const secret = await call(url, 'POST', '/v1/events', event(0, {input: {card: '4111 1111 1111 1111'}}))
      await call(url, 'POST', '/v1/erasures', {ids: [secret.id], reason: 'customer asked'})
      refuse = false
      await waitFor(() => ndjsonEvents(receiver).length >= 2, 'the event and the erasure')
      const [sent] = ndjsonEvents(receiver)
      expect(sent.id).to.equal(secret.id)
      expect(sent).to.not.have.property('input')
      expect(sent.erased).to.have.property('input')
      expect(receiver.requests.map((r) => r.body.toString())).to.not.match(/4111/)
    })

    it('sends OTLP/HTTP protobuf log records carrying the span attributes the event came in with', async () => {
      const destination = parseDestination(`otlp+${receiver.url}/v1/logs`)
      const {url} = await start({destinations: [destination], ...quick}, true)
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
      const spanId = '00f067aa0ba902b7'
      const attributes = [
        {key: 'gen_ai.operation.name', value: {stringValue: 'execute_tool'}},
        {key: 'gen_ai.tool.name', value: {stringValue: 'refund'}},
        {key: 'gen_ai.agent.name', value: {stringValue: 'support-bot'}},
        {key: 'gen_ai.usage.input_tokens', value: {intValue: '120'}},
      ]
      const span = {
        traceId,
        spanId,
        name: 'execute_tool refund',
        startTimeUnixNano: '1767225600000000000',
        endTimeUnixNano: '1767225600500000000',
        attributes,
      }
      await call(url, 'POST', '/v1/traces', {
        resourceSpans: [{resource: {attributes: []}, scopeSpans: [{spans: [span]}]}],
      })
      await waitFor(() => otlpRecords(receiver).length >= 1, 'a log record')
      expect(receiver.requests[0]!.headers['content-type']).to.equal('application/x-protobuf')
      const [record] = otlpRecords(receiver)
      const [stored] = await recorded(url)
      expect(JSON.parse(record.body.stringValue)).to.deep.equal(stored)
      expect(Buffer.from(record.traceId, 'base64').toString('hex')).to.equal(traceId)
      expect(Buffer.from(record.spanId, 'base64').toString('hex')).to.equal(spanId)
      expect(record.timeUnixNano).to.equal('1767225600000000000')
      const byKey = Object.fromEntries(record.attributes.map((a: any) => [a.key, a.value]))
      for (const {key, value} of attributes) expect(byKey[key], key).to.deep.equal(value)
      expect(byKey['audit_trail.trail']).to.deep.equal({stringValue: 'default'})
      expect(byKey['audit_trail.hash']).to.deep.equal({stringValue: stored.hash})
      expect(byKey['audit_trail.index']).to.deep.equal({intValue: '0'})
    })
  })
})
