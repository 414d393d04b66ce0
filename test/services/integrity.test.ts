import {expect} from 'chai'
import {makeEvent, servicesPerTest} from '../support/harness.js'

describe('IntegrityService while events arrive', function () {
  this.timeout(30_000)
  const ctx = servicesPerTest()

  it('never calls a growing chain short of its recorded head (heads are read before the events)', async () => {
    const {services} = ctx
    await services.ingest.recordBatch(Array.from({length: 20}, (_, i) => makeEvent({agent_id: `agent-${i % 3}`})))
    const writes = (async () => {
      for (let round = 0; round < 40; round++) {
        await services.ingest.recordBatch(Array.from({length: 25}, (_, i) => makeEvent({agent_id: `agent-${i % 3}`, action_name: `r${round}`})))
      }
    })()
    const checks: Array<Promise<unknown>> = []
    for (let i = 0; i < 40; i++) {
      checks.push(services.integrity.verifyAll().then((all) => expect(all, JSON.stringify(all)).to.include({valid: true})))
      checks.push(services.integrity.verifyAgent('agent-1').then((one) => expect(one.valid, JSON.stringify(one)).to.equal(true)))
      checks.push(services.integrity.chainStatus().then((status) => expect([...status.values()].every(Boolean)).to.equal(true)))
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all([writes, ...checks])
    expect(await services.integrity.verifyAll()).to.deep.include({valid: true, events_checked: 1020, agents_checked: 3})
  })
})
