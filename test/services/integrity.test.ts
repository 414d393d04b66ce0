import {expect} from 'chai'
import type {ScanOptions} from '../../src/store/store.js'
import {makeEvent, servicesPerTest} from '../support/harness.js'
import {forEachStore} from '../support/stores.js'

describe('IntegrityService while events arrive', function () {
  this.timeout(60_000)
  forEachStore((store) => {
    const ctx = servicesPerTest(store)

    it('never calls a growing chain short or long of its recorded head (heads read with the count)', async () => {
      const {services} = ctx
      await services.ingest.recordBatch(Array.from({length: 20}, (_, i) => makeEvent({agent_id: `agent-${i % 3}`})))
      // Events recorded right after each scan has read its last row, before the check is summed up:
      // heads read then would be ahead of the chains just read.
      const store = services.store
      const scan = store.scanHashedEvents.bind(store)
      let round = 0
      store.scanHashedEvents = (options?: ScanOptions) =>
        (async function* () {
          yield* scan(options)
          await services.ingest.recordBatch(
            Array.from({length: 3}, (_, i) =>
              makeEvent({agent_id: `agent-${i}`, action_name: `after-scan-${round++}`}),
            ),
          )
        })()
      expect(await services.integrity.verifyAll()).to.include({valid: true})
      expect((await services.integrity.verifyAgent('agent-1')).valid).to.equal(true)
      expect([...(await services.integrity.chainStatus()).values()]).to.deep.equal([true, true, true])
      expect([...(await services.integrity.chainStatus()).values()]).to.deep.equal([true, true, true])
      store.scanHashedEvents = scan
      // And under concurrent appends of many batches.
      const writes = (async () => {
        for (let i = 0; i < 40; i++)
          await services.ingest.recordBatch(Array.from({length: 25}, (_, j) => makeEvent({agent_id: `agent-${j % 3}`})))
      })()
      const checks: Array<Promise<unknown>> = []
      for (let i = 0; i < 20; i++) {
        checks.push(
          services.integrity.verifyAll().then((all) => expect(all, JSON.stringify(all)).to.include({valid: true})),
        )
        checks.push(
          services.integrity.chainStatus().then((status) => expect([...status.values()].every(Boolean)).to.equal(true)),
        )
        await new Promise((resolve) => setImmediate(resolve))
      }
      await Promise.all([writes, ...checks])
      expect(await services.integrity.verifyAll()).to.deep.include({
        valid: true,
        events_checked: 20 + 4 * 3 + 1000,
        agents_checked: 3,
      })
    })

    it(
      'answers no caller from a catch-up that began before the events it asked after (the one after start-up is ' +
        'long)',
      async () => {
        const {services} = ctx
        await services.ingest.recordBatch(Array.from({length: 10}, () => makeEvent({agent_id: 'old'})))
        await services.timestamps.issue()
        // The first catch-up reads the heads and the count, then waits (as a long scan would) until released.
        const store = services.store
        const scan = store.scanHashedEvents.bind(store)
        let release!: () => void
        const gate = new Promise<void>((resolve) => (release = resolve))
        let first = true
        store.scanHashedEvents = (options?: ScanOptions) =>
          (async function* () {
            if (first) {
              first = false
              await gate
            }
            yield* scan(options)
          })()
        const startup = services.integrity.chainStatus()
        await new Promise((resolve) => setImmediate(resolve))
        await services.ingest.recordOne(makeEvent({agent_id: 'newcomer'}))
        // Issuing checks signed history over the tree of 11 (signed-history.ts): it too must wait for a
        // catch-up that covers the newcomer, not take the pending one's answer.
        const issued = services.timestamps.issue()
        const results = services.integrity.chainResults()
        const latest = services.timestamps.verifyLatest()
        release()
        await startup
        expect((await results).get('newcomer')).to.deep.include({valid: true, events_checked: 1})
        expect(await issued).to.include({tree_size: 11})
        expect(await latest).to.include({valid: true, consistent: true})
        store.scanHashedEvents = scan
      },
    )
  })
})
