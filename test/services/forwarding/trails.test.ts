/**
 * Forwarding sends every trail (docs/forwarding.md, "Trails"): each trail's events in its own index
 * order with its name in the `x-audit-trail-trail` header, from a position per destination and
 * trail, trails created while serving included; GET /v1/trails/NAME/forwarding shows that trail.
 */
import {expect} from 'chai'
import {startService, type RunningService} from '../../../src/server/start.js'
import {parseKeyFile} from '../../../src/core/auth/keys.js'
import {parseDestination} from '../../../src/services/forwarding/index.js'
import {removeDir, tempDir} from '../../support/harness.js'
import {startHttpReceiver, waitFor, type HttpReceiver} from './receivers.js'

async function call(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {'content-type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  expect(response.status, await response.clone().text()).to.be.oneOf([200, 201])
  return response.json()
}

const event = (n: number) => ({agent_id: 'bot', action_type: 'TOOL_CALL', action_name: `step_${n}`})

/** Each trail's forwarded events, from the header of the batch that carried them. */
function byTrail(receiver: HttpReceiver): Record<string, any[]> {
  const trails: Record<string, any[]> = {}
  for (const request of receiver.requests) {
    const trail = String(request.headers['x-audit-trail-trail'])
    const lines = request.body.toString('utf8').split('\n')
    for (const line of lines.filter((l) => l !== '')) (trails[trail] ??= []).push(JSON.parse(line))
  }
  return trails
}

describe('forwarding every trail', function () {
  this.timeout(60_000)
  let dir: string
  let receiver: HttpReceiver
  let service: RunningService

  beforeEach(async () => {
    dir = await tempDir()
    receiver = await startHttpReceiver()
    service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      forwarding: {destinations: [parseDestination(`${receiver.url}/hook`, '')], retry: {initialMs: 30, maxMs: 100}},
    })
  })
  afterEach(async () => {
    await service.close()
    await receiver.close()
    await removeDir(dir)
  })

  it('sends the events of a trail created while serving, apart from the default trail', async () => {
    const {url} = service
    await call(url, 'POST', '/v1/batch', [event(0), event(1)])
    await call(url, 'POST', '/v1/trails', {name: 'payments'})
    await call(url, 'POST', '/v1/trails/payments/batch', [event(10), event(11), event(12)])
    await waitFor(() => (byTrail(receiver).payments?.length ?? 0) >= 3, 'three events of payments')
    await waitFor(() => (byTrail(receiver).default?.length ?? 0) >= 2, 'two events of default')
    const sent = byTrail(receiver)
    expect(sent.payments).to.deep.equal(await call(url, 'GET', '/v1/trails/payments/events'))
    expect(sent.default).to.deep.equal(await call(url, 'GET', '/v1/events'))
    expect(sent.payments!.map((e) => e.index)).to.deep.equal([0, 1, 2])

    const status = await call(url, 'GET', '/v1/trails/payments/forwarding')
    expect(status.destinations).to.have.length(1)
    expect(status.destinations[0].trails.map((t: {trail: string}) => t.trail)).to.deep.equal(['payments'])
    await waitFor(
      async () => (await call(url, 'GET', '/v1/trails/payments/forwarding')).destinations[0].position === 3,
      'position 3',
    )
    const every = await call(url, 'GET', '/v1/forwarding')
    const positions = Object.fromEntries(every.destinations[0].trails.map((t: any) => [t.trail, t.position]))
    expect(positions).to.deep.equal({default: 2, payments: 3})
    expect(every.destinations[0].position).to.equal(2)
  })
})

describe('forwarding status for a key bound to a trail', function () {
  this.timeout(60_000)

  it('shows only the trails the key opens, and 404 for another', async () => {
    const dir = await tempDir()
    const receiver = await startHttpReceiver()
    const admin = 'admin-key-0123456789abcdef'
    const bound = 'bound-key-0123456789abcdef'
    const service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      apiKeys: parseKeyFile(`${admin} read,write,admin\n${bound} read trail=payments\n`),
      forwarding: {destinations: [parseDestination(`${receiver.url}/hook`, '')], retry: {initialMs: 30, maxMs: 100}},
    })
    try {
      const as = (key: string) => ({authorization: `Bearer ${key}`, 'content-type': 'application/json'})
      const created = await fetch(`${service.url}/v1/trails`, {
        method: 'POST',
        headers: as(admin),
        body: JSON.stringify({name: 'payments'}),
      })
      expect(created.status).to.equal(201)
      const shown = await (await fetch(`${service.url}/v1/forwarding`, {headers: as(bound)})).json()
      const trails = shown.destinations.flatMap((d: {trails: {trail: string}[]}) => d.trails.map((t) => t.trail))
      expect(trails).to.deep.equal(['payments'])
      const all = await (await fetch(`${service.url}/v1/forwarding`, {headers: as(admin)})).json()
      expect(all.destinations[0].trails.map((t: {trail: string}) => t.trail)).to.include.members([
        'default',
        'payments',
      ])
      const other = await fetch(`${service.url}/v1/trails/default/forwarding`, {headers: as(bound)})
      expect(other.status).to.equal(404)
      expect((await other.json()).error.code).to.equal('trail_not_found')
    } finally {
      await service.close()
      await receiver.close()
      await removeDir(dir)
    }
  })
})
