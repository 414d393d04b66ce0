/**
 * A store at its enforced capacity over HTTP (docs/api.md and docs/design.md, "Capacity"): 507 storage_full with
 * the contract's error body, nothing of the refused request recorded, and /healthz and /v1/stats
 * saying how full the store is.
 */
import {expect} from 'chai'
import {makeEvent, useTestApi} from '../support/harness.js'

describe('HTTP: the embedded store at its capacity', () => {
  const warnings: string[] = []
  const api = useTestApi({audit: {store: {capacityBytes: 512 * 1024, warn: (m) => warnings.push(m)}}}, 'suite')

  it('answers 507 storage_full past the capacity, records nothing of it, and reports the state', async () => {
    const big = () => makeEvent({input: {text: 'y'.repeat(1000)}})
    let refused: {status: number; body: any} | undefined
    let accepted = 0
    for (let i = 0; i < 500 && refused === undefined; i++) {
      const res = await api.request('POST', '/v1/batch', {body: Array.from({length: 20}, big)})
      if (res.status === 201) accepted += 20
      else refused = res
    }
    expect(refused?.status).to.equal(507)
    expect(refused?.body.error.code).to.equal('storage_full')
    expect(refused?.body.error.message).to.match(
      /nothing was recorded.*audit-trail migrate --data-dir DIR --database-url/,
    )
    // Single events still fit where the batch did not, until they no longer do either.
    let single = await api.request('POST', '/v1/events', {body: big()})
    for (let i = 0; i < 100 && single.status === 201; i++) {
      accepted++
      single = await api.request('POST', '/v1/events', {body: big()})
    }
    expect(single.status).to.equal(507)
    expect(single.body.error.code).to.equal('storage_full')
    expect((await api.request('GET', '/v1/merkle/root')).body.tree_size).to.equal(accepted)
    expect((await api.request('GET', '/v1/events?limit=1')).headers.get('x-total-count')).to.equal(String(accepted))
    const health = await api.request('GET', '/healthz')
    expect(health.status).to.equal(200)
    expect(health.body.status).to.equal('ok')
    expect(health.body.storage).to.include({backend: 'embedded', capacity_bytes: 512 * 1024})
    expect(health.body.storage.state).to.be.oneOf(['warning', 'full'])
    const stats = await api.request('GET', '/v1/stats')
    expect(stats.body.storage).to.deep.equal(health.body.storage)
    expect(warnings).to.have.length(1)
    expect((await api.request('GET', '/v1/verify')).body.valid).to.equal(true)
  })
})
