/**
 * Full pages of GET /v1/events are kept in memory (page-cache.ts): whatever is appended, every
 * answer must equal the store's own fresh answer, and the total must always be current.
 */
import {expect} from 'chai'
import fc from 'fast-check'
import {PageCache} from '../../src/services/page-cache.js'
import {parseEventQuery} from '../../src/core/query-params.js'
import type {StoredEvent} from '../../src/core/types.js'
import {makeEvent, servicesPerTest} from '../support/harness.js'

const event = (i: number) =>
  makeEvent({
    agent_id: `agent-${i % 3}`,
    action_type: i % 2 ? 'LLM_CALL' : 'TOOL_CALL',
    action_name: `step-${i % 5}`,
    labels: i % 4 ? {env: i % 2 ? 'prod' : 'dev'} : {},
  })

describe('QueryService page cache (GET /v1/events)', () => {
  const ctx = servicesPerTest()

  it('answers as the store does, with a current total, however appends and queries interleave (property)', async () => {
    let recorded = 0
    const query = fc.record({
      agent_id: fc.option(fc.constantFrom('agent-0', 'agent-1', 'agent-9'), {nil: undefined}),
      action_type: fc.option(fc.constantFrom('LLM_CALL', 'TOOL_CALL'), {nil: undefined}),
      'label.env': fc.option(fc.constantFrom('prod', 'dev'), {nil: undefined}),
      limit: fc.constantFrom('1', '2', '5', '10'),
      offset: fc.constantFrom('0', '1', '3', '8'),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.integer({min: 1, max: 12}), query), {maxLength: 25}), async (steps) => {
        for (const step of steps) {
          if (typeof step === 'number') {
            await ctx.services.ingest.recordBatch(Array.from({length: step}, (_, i) => event(recorded + i)))
            recorded += step
            continue
          }
          const params = Object.fromEntries(Object.entries(step).filter(([, v]) => v !== undefined)) as Record<
            string,
            string
          >
          const {filter, page} = parseEventQuery(params)
          const fresh = await ctx.services.store.queryEvents(filter, page)
          const listed = await ctx.services.query.listEvents(params)
          expect(listed.total).to.equal(fresh.total)
          expect(listed.events).to.deep.equal(fresh.items)
          const asJson = await ctx.services.query.listEventsJson(params)
          expect(asJson.total).to.equal(fresh.total)
          expect(JSON.parse(asJson.body.toString('utf8'))).to.deep.equal(fresh.items)
        }
      }),
      {numRuns: 30},
    )
  })

  it('serves a full page again from memory and never keeps a page that can still grow', async () => {
    await ctx.services.ingest.recordBatch(Array.from({length: 6}, (_, i) => event(i)))
    const first = await ctx.services.query.listEvents({agent_id: 'agent-0', limit: '2'})
    const again = await ctx.services.query.listEvents({agent_id: 'agent-0', limit: '2'})
    expect(again.events, 'the same objects: from memory').to.equal(first.events)
    const tail = await ctx.services.query.listEvents({agent_id: 'agent-0', limit: '5'})
    expect(tail.events).to.have.length(2)
    await ctx.services.ingest.recordBatch(Array.from({length: 3}, (_, i) => event(6 + i)))
    const grown = await ctx.services.query.listEvents({agent_id: 'agent-0', limit: '5'})
    expect(grown.events.map((e) => e.index)).to.deep.equal([0, 3, 6])
    expect(grown.total).to.equal(3)
  })

  it('forgets the least recently used pages beyond its bounds', () => {
    const cache = new PageCache()
    const events = (n: number) => Array.from({length: n}, (_, i) => ({index: i}) as StoredEvent)
    cache.offer('a', 10_000, events(10_000))
    cache.offer('b', 10_000, events(10_000))
    expect(cache.get('a')).to.not.equal(undefined)
    // 30,000 events would pass the 20,000 kept: 'b', used least recently, goes.
    cache.offer('c', 10_000, events(10_000))
    expect(cache.get('b')).to.equal(undefined)
    expect(cache.get('a')).to.not.equal(undefined)
    expect(cache.get('c')).to.not.equal(undefined)
    for (let i = 0; i < 1001; i++) cache.offer(`p${i}`, 1, events(1))
    expect(cache.get('a'), 'more than 1,000 pages').to.equal(undefined)
    expect(cache.get('p1000')).to.not.equal(undefined)
    expect(cache.offer('short', 5, events(4)), 'not full').to.not.equal(undefined)
    expect(cache.get('short')).to.equal(undefined)
  })
})
