import {expect} from 'chai'
import {decodeKeySet} from '../../../src/core/cose/index.js'
import {makeEvent} from '../../support/harness.js'
import {startTrailTestApi, type TrailTestApi} from '../../support/trails.js'

describe('trails over HTTP', () => {
  let api: TrailTestApi
  beforeEach(async () => {
    api = await startTrailTestApi()
  })
  afterEach(() => api.close())

  it('creates a trail (201), lists it, and says 409 for one that exists', async () => {
    const created = await api.plain('POST', '/v1/trails', {body: {name: 'payments', origin: 'example.com/payments'}})
    expect(created.status).to.equal(201)
    expect(created.body).to.include({name: 'payments', origin: 'example.com/payments', tree_size: 0, sealed: false})
    expect(created.body.verifier_key).to.match(/^example\.com\/payments\+[0-9a-f]{8}\+/)
    const listed = await api.plain('GET', '/v1/trails')
    expect(listed.body.map((t: {name: string}) => t.name)).to.deep.equal(['default', 'payments'])
    const again = await api.plain('POST', '/v1/trails', {body: {name: 'payments'}})
    expect(again.status).to.equal(409)
    expect(again.body.error.code).to.equal('conflict')
  })

  it('refuses a bad name naming the rule, and a body that is no trail', async () => {
    const bad = await api.plain('POST', '/v1/trails', {body: {name: 'Payments!'}})
    expect(bad.status).to.equal(400)
    expect(bad.body.error.message).to.include('1 to 63 characters of a-z 0-9 and -')
    const extra = await api.plain('POST', '/v1/trails', {body: {name: 'x', colour: 'red'}})
    expect(extra.status).to.equal(400)
    expect(extra.body.error.details[0].field).to.equal('colour')
    const elsewhere = await api.plain('POST', '/v1/trails', {body: {name: 'x', in_database: 'postgres://h/db'}})
    expect(elsewhere.body.error.details[0].field).to.equal('in_database')
    const missing = await api.plain('POST', '/v1/trails', {body: {origin: 'x'}})
    expect(missing.status).to.equal(400)
    expect(missing.body.error.details[0].field).to.equal('name')
    expect((await api.plain('GET', '/v1/trails')).body).to.have.length(1)
    const badPath = await api.plain('GET', '/v1/trails/Bad_Name/events')
    expect(badPath.status).to.equal(400)
  })

  it('answers 404 trail_not_found for an unknown trail, on every kind of path', async () => {
    for (const path of [
      '/v1/trails/nope/events',
      '/v1/trails/nope',
      '/tlog/nope/checkpoint',
      '/v1/trails/nope/entries/x',
    ]) {
      const response = await api.plain('GET', path)
      expect(response.status, path).to.equal(404)
    }
    const response = await api.plain('POST', '/v1/trails/nope/seal')
    expect(response.body.error.code).to.equal('trail_not_found')
    expect((await api.plain('GET', '/v1/trails/nope/stats')).body.error.code).to.equal('trail_not_found')
  })

  it('keeps the events, the tree and the checkpoint of each trail apart', async () => {
    await api.plain('POST', '/v1/trails', {body: {name: 'payments'}})
    expect((await api.plain('POST', '/v1/trails/payments/events', {body: makeEvent()})).status).to.equal(201)
    expect((await api.plain('POST', '/v1/trails/payments/events', {body: makeEvent()})).status).to.equal(201)
    expect((await api.plain('POST', '/v1/events', {body: makeEvent({agent_id: 'other'})})).status).to.equal(201)
    const onTrail = await api.plain('GET', '/v1/trails/payments/events')
    expect(onTrail.body.map((e: {agent_id: string}) => e.agent_id)).to.deep.equal(['agent-1', 'agent-1'])
    const plain = await api.plain('GET', '/v1/events')
    expect(plain.body.map((e: {agent_id: string}) => e.agent_id)).to.deep.equal(['other'])
    const roots = await Promise.all(
      ['/v1/merkle/root', '/v1/trails/payments/merkle/root'].map(async (p) => (await api.plain('GET', p)).body),
    )
    expect(roots.map((r) => r.tree_size)).to.deep.equal([1, 2])
    await api.trails.default.checkpoints.signIfGrown()
    await (await api.trails.open('payments')).checkpoints.signIfGrown()
    const [first, second] = await Promise.all(
      ['/tlog/checkpoint', '/tlog/payments/checkpoint'].map((p) => api.plain('GET', p)),
    )
    expect(first.text.split('\n')[1]).to.equal('1')
    expect(second.text.split('\n')[1]).to.equal('2')
    expect(second.text.split('\n')[0]).to.not.equal(first.text.split('\n')[0])
    expect((await api.plain('GET', '/v1/trails/payments')).body).to.include({name: 'payments', tree_size: 2})
  })

  it('seals a trail once: a second seal is 200 and changes nothing', async () => {
    await api.plain('POST', '/v1/trails', {body: {name: 'q1'}})
    const first = await api.plain('POST', '/v1/trails/q1/seal')
    expect(first.status).to.equal(200)
    expect(first.body).to.include({name: 'q1', sealed: true})
    const second = await api.plain('POST', '/v1/trails/q1/seal')
    expect(second.status).to.equal(200)
    expect(second.body).to.deep.equal(first.body)
  })

  it('lists every trail key at /.well-known/scitt-keys', async () => {
    await api.plain('POST', '/v1/trails', {body: {name: 'payments'}})
    const response = await fetch(`${api.url}/.well-known/scitt-keys`)
    const keys = decodeKeySet(new Uint8Array(await response.arrayBuffer()))
    expect(keys).to.have.length(2)
    const kid = Buffer.from(keys[1]!.kid!).toString('base64url')
    expect((await fetch(`${api.url}/.well-known/scitt-keys/${kid}`)).status).to.equal(200)
    expect((await fetch(`${api.url}/.well-known/scitt-keys/AAAA`)).status).to.equal(404)
  })

  it('serves a trail named tile or checkpoint beside the default paths', async () => {
    await api.plain('POST', '/v1/trails', {body: {name: 'tile'}})
    await api.plain('POST', '/v1/trails/tile/events', {body: makeEvent()})
    await (await api.trails.open('tile')).checkpoints.signIfGrown()
    await api.trails.default.checkpoints.signIfGrown()
    expect((await api.plain('GET', '/tlog/tile/checkpoint')).text.split('\n')[1]).to.equal('1')
    expect((await api.plain('GET', '/tlog/checkpoint')).text.split('\n')[1]).to.equal('0')
    expect((await api.plain('GET', '/tlog/tile/tile/entries/000.p/1')).status).to.equal(200)
    expect((await api.plain('GET', '/tlog/tile/entries/000.p/1')).status).to.equal(404)
  })
})
