/**
 * Keys bound to trails (`trail=` on a key line, docs/trails.md): a key bound to trail A finds no
 * other trail on any route family (404 trail_not_found, as an unknown trail), lists only A, and its
 * unprefixed requests act on A; creating and sealing trails need `admin`.
 */
import {expect} from 'chai'
import {parseKeyFile} from '../../../src/core/auth/keys.js'
import {makeEvent} from '../../support/harness.js'
import {startTrailTestApi, type TrailTestApi} from '../../support/trails.js'

const BOUND = 'bound-to-alpha-0123456789abcdef'
const TWO = 'bound-to-two-trails-0123456789ab'
const ADMIN = 'admin-everything-0123456789abcdef'
const WRITER = 'writer-everything-0123456789abcd'
const KEYS = parseKeyFile(
  `${BOUND} read,write,erase,admin,approve trail=alpha\n` +
    `${TWO} read,write trail=alpha,beta\n` +
    `${ADMIN} read,write,erase,admin,approve\n` +
    `${WRITER} read,write\n`,
)
const ID = '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091'

/** One request of each route family, as the unprefixed path of one log. */
const FAMILIES: Array<{method: string; path: string; body?: unknown}> = [
  {method: 'POST', path: '/v1/events', body: makeEvent()},
  {method: 'POST', path: '/v1/batch', body: [makeEvent()]},
  {method: 'GET', path: '/v1/events'},
  {method: 'GET', path: `/v1/events/${ID}`},
  {method: 'GET', path: `/v1/events/${ID}/receipt`},
  {method: 'GET', path: '/v1/search?q=x'},
  {method: 'GET', path: '/v1/agents'},
  {method: 'GET', path: '/v1/stats'},
  {method: 'GET', path: '/v1/verify'},
  {method: 'GET', path: '/v1/merkle/root'},
  {method: 'GET', path: `/v1/merkle/proof/${ID}`},
  {method: 'GET', path: '/v1/merkle/consistency?first=0'},
  {method: 'GET', path: '/v1/export'},
  {method: 'POST', path: '/v1/timestamp'},
  {method: 'GET', path: '/v1/timestamps'},
  {method: 'GET', path: '/v1/timestamps/verify'},
  {method: 'POST', path: '/v1/policy/check', body: {policies: [{name: 'c', type: 'chain_integrity'}]}},
  {method: 'POST', path: '/v1/erasures', body: {ids: [ID], reason: 'test'}},
  {method: 'GET', path: '/v1/agents/agent-1/keys'},
  {method: 'GET', path: '/v1/approvals'},
  {method: 'GET', path: '/v1/log/key'},
  {method: 'GET', path: '/v1/dashboard/config'},
  {method: 'POST', path: '/v1/traces', body: {resourceSpans: []}},
  {method: 'GET', path: `/entries/${ID}`},
]

function onTrail(trail: string, path: string): string {
  return path.startsWith('/entries') ? `/v1/trails/${trail}${path}` : `/v1/trails/${trail}/${path.slice(4)}`
}

describe('keys bound to trails', () => {
  let api: TrailTestApi
  const as = (key: string) => ({authorization: `Bearer ${key}`})
  before(async () => {
    api = await startTrailTestApi({app: {apiKeys: KEYS, otlp: true}})
    for (const name of ['alpha', 'beta'])
      expect((await api.plain('POST', '/v1/trails', {body: {name}, headers: as(ADMIN)})).status).to.equal(201)
  })
  after(() => api.close())

  for (const {method, path, body} of FAMILIES) {
    it(`${method} ${path}: another trail is 404 trail_not_found, as an unknown one`, async () => {
      const other = await api.plain(method, onTrail('beta', path), {body, headers: as(BOUND)})
      const unknown = await api.plain(method, onTrail('nowhere', path), {body, headers: as(ADMIN)})
      for (const response of [other, unknown]) {
        expect(response.status, response.text).to.equal(404)
        expect(response.text).to.include('trail_not_found')
      }
      const own = await api.plain(method, onTrail('alpha', path), {body, headers: as(BOUND)})
      expect(own.text).to.not.include('trail_not_found')
    })
  }

  it('lists only the trails the key is bound to', async () => {
    const bound = await api.plain('GET', '/v1/trails', {headers: as(BOUND)})
    expect(bound.body.map((t: {name: string}) => t.name)).to.deep.equal(['alpha'])
    const two = await api.plain('GET', '/v1/trails', {headers: as(TWO)})
    expect(two.body.map((t: {name: string}) => t.name)).to.deep.equal(['alpha', 'beta'])
    const admin = await api.plain('GET', '/v1/trails', {headers: as(ADMIN)})
    expect(admin.body.map((t: {name: string}) => t.name)).to.deep.equal(['default', 'alpha', 'beta'])
    expect((await api.plain('GET', '/v1/trails/beta', {headers: as(BOUND)})).status).to.equal(404)
    expect((await api.plain('GET', '/v1/trails/alpha', {headers: as(BOUND)})).status).to.equal(200)
  })

  it('acts on the one bound trail for unprefixed paths', async () => {
    const created = await api.plain('POST', '/v1/events', {
      body: makeEvent({agent_id: 'unprefixed'}),
      headers: as(BOUND),
    })
    expect(created.status).to.equal(201)
    const onAlpha = await api.plain('GET', '/v1/trails/alpha/events?agent_id=unprefixed', {headers: as(ADMIN)})
    expect(onAlpha.body.map((e: {id: string}) => e.id)).to.deep.equal([created.body.id])
    const onDefault = await api.plain('GET', '/v1/events?agent_id=unprefixed', {headers: as(ADMIN)})
    expect(onDefault.body).to.deep.equal([])
    const read = await api.plain('GET', `/v1/events/${created.body.id}`, {headers: as(BOUND)})
    expect(read.status).to.equal(200)
  })

  it('asks a key bound to several trails to name one', async () => {
    const response = await api.plain('GET', '/v1/events', {headers: as(TWO)})
    expect(response.status).to.equal(404)
    expect(response.body.error.code).to.equal('trail_not_found')
    expect(response.body.error.message).to.include('/v1/trails/NAME/')
    expect((await api.plain('GET', '/v1/trails/beta/events', {headers: as(TWO)})).status).to.equal(200)
  })

  it('needs admin to create or seal a trail, and a bound admin creates none outside its trails', async () => {
    const create = await api.plain('POST', '/v1/trails', {body: {name: 'gamma'}, headers: as(WRITER)})
    expect(create.status).to.equal(403)
    expect(create.body.error.code).to.equal('forbidden')
    const seal = await api.plain('POST', '/v1/trails/beta/seal', {headers: as(WRITER)})
    expect(seal.status).to.equal(403)
    expect((await api.plain('POST', '/v1/trails', {body: {name: 'gamma'}})).status).to.equal(401)
    const bound = await api.plain('POST', '/v1/trails', {body: {name: 'gamma'}, headers: as(BOUND)})
    expect(bound.status).to.equal(403)
    const sealOther = await api.plain('POST', '/v1/trails/beta/seal', {headers: as(BOUND)})
    expect(sealOther.status).to.equal(404)
    const listed = await api.plain('GET', '/v1/trails', {headers: as(ADMIN)})
    expect(listed.body.map((t: {name: string; sealed: boolean}) => [t.name, t.sealed])).to.deep.equal([
      ['default', false],
      ['alpha', false],
      ['beta', false],
    ])
  })

  it('serves every trail checkpoint without a key (tiles and checkpoints hold hashes only)', async () => {
    expect((await api.plain('GET', '/tlog/beta/checkpoint')).status).to.equal(200)
    expect((await api.plain('GET', '/tlog/nowhere/checkpoint')).status).to.equal(404)
  })
})
