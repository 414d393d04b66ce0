import {expect} from 'chai'
import type {ScanOptions} from '../../src/store/store.js'
import {makeEvent, servicesPerTest} from '../support/harness.js'

describe('IntegrityService while events arrive', function () {
  this.timeout(60_000)
  const ctx = servicesPerTest()

  it('never calls a growing chain short of its recorded head (heads are read before the events)', async () => {
    const {services} = ctx
    await services.ingest.recordBatch(Array.from({length: 20}, (_, i) => makeEvent({agent_id: `agent-${i % 3}`})))
    // Events recorded right after each scan has read its last row, before the check is summed up:
    // heads read then would be ahead of the chains just read.
    const store = services.store
    const scan = store.scanHashedEvents.bind(store)
    let round = 0
    store.scanHashedEvents = (options?: ScanOptions) => (async function* () {
      yield* scan(options)
      await services.ingest.recordBatch(Array.from({length: 3}, (_, i) => makeEvent({agent_id: `agent-${i}`, action_name: `after-scan-${round++}`})))
    })()
    expect(await services.integrity.verifyAll()).to.include({valid: true})
    expect((await services.integrity.verifyAgent('agent-1')).valid).to.equal(true)
    expect([...(await services.integrity.chainStatus()).values()]).to.deep.equal([true, true, true])
    expect([...(await services.integrity.chainStatus()).values()]).to.deep.equal([true, true, true])
    store.scanHashedEvents = scan
    // And under concurrent appends of many batches.
    const writes = (async () => {
      for (let i = 0; i < 40; i++) await services.ingest.recordBatch(Array.from({length: 25}, (_, j) => makeEvent({agent_id: `agent-${j % 3}`})))
    })()
    const checks: Array<Promise<unknown>> = []
    for (let i = 0; i < 20; i++) {
      checks.push(services.integrity.verifyAll().then((all) => expect(all, JSON.stringify(all)).to.include({valid: true})))
      checks.push(services.integrity.chainStatus().then((status) => expect([...status.values()].every(Boolean)).to.equal(true)))
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all([writes, ...checks])
    expect(await services.integrity.verifyAll()).to.deep.include({valid: true, events_checked: 20 + 4 * 3 + 1000, agents_checked: 3})
  })
})
