import {expect} from 'chai'
import fc from 'fast-check'
import type {StoredEvent} from '../../../src/core/types.js'
import {naiveExceeded} from './reference.js'
import {check, makeTrail, violatingIds, type EventSpec} from './trail.js'

const HOUR = 3_600_000
const approval: EventSpec = {action_type: 'HUMAN_APPROVAL', action_name: 'approve'}
const piiRead: EventSpec = {action_type: 'DATA_ACCESS', action_name: 'pii.customers'}

describe('policy rules over time within a chain', () => {
  describe('require_preceding', () => {
    const rule = {
      name: 'pii-needs-approval',
      type: 'require_preceding',
      match: {action_type: 'DATA_ACCESS', action_name: 'pii.*'},
      preceded_by: {action_type: 'HUMAN_APPROVAL'},
      within: '1h',
    }

    it('passes when an approval of the same agent comes earlier within the window', async () => {
      const trail = makeTrail([
        {...approval, at: 0},
        {...piiRead, at: 30 * 60_000},
        {action_type: 'DATA_ACCESS', action_name: 'orders', at: 5 * HOUR},
      ])
      expect((await check([rule], trail)).passed).to.equal(true)
    })

    it('accepts an approval exactly `within` before and rejects one a millisecond older', async () => {
      expect(
        (
          await check(
            [rule],
            makeTrail([
              {...approval, at: 0},
              {...piiRead, at: HOUR},
            ]),
          )
        ).passed,
      ).to.equal(true)
      const late = makeTrail([
        {...approval, at: 0},
        {...piiRead, at: HOUR + 1},
      ])
      const report = await check([rule], late)
      expect(violatingIds(report)).to.deep.equal([late[1]!.id])
      expect(report.results[0]!.violations[0]).to.deep.equal({
        event_id: late[1]!.id,
        agent_id: 'agent-a',
        sequence: 2,
        message:
          'DATA_ACCESS pii.customers by agent "agent-a" has no earlier event matching action_type=HUMAN_APPROVAL ' +
          'within 1h before it.',
      })
    })

    it('does not accept an approval of another agent, or one later in the chain', async () => {
      const trail = makeTrail([
        {...approval, agent_id: 'other', at: 0},
        {...piiRead, at: 1000},
        {...approval, at: 2000},
      ])
      expect(violatingIds(await check([rule], trail))).to.deep.equal([trail[1]!.id])
    })

    it('orders by the chain: an approval earlier in the chain counts even when stamped after the access', async () => {
      const trail = makeTrail([
        {...approval, at: 10 * 60_000},
        {...piiRead, at: 5 * 60_000},
      ])
      expect((await check([rule], trail)).passed).to.equal(true)
    })

    it('uses the approval with the latest timestamp, not merely the last one', async () => {
      // Two approvals, the second stamped earlier (clock skew); the first is within 1h of the access.
      const trail = makeTrail([
        {...approval, at: 2 * HOUR},
        {...approval, at: 0},
        {...piiRead, at: 2.5 * HOUR},
      ])
      expect((await check([rule], trail)).passed).to.equal(true)
    })

    it('without `within`, accepts any earlier approval however old', async () => {
      const {within: _, ...noWindow} = rule
      const trail = makeTrail([
        {...approval, at: 0},
        {...piiRead, at: 400 * 24 * HOUR},
      ])
      expect((await check([noWindow], trail)).passed).to.equal(true)
      const report = await check([noWindow], makeTrail([piiRead]))
      expect(report.results[0]!.violations[0]!.message).to.equal(
        'DATA_ACCESS pii.customers by agent "agent-a" has no earlier event matching action_type=HUMAN_APPROVAL.',
      )
    })

    it('never lets an event precede itself', async () => {
      const selfish = {
        name: 'two-step',
        type: 'require_preceding',
        match: {action_type: 'DECISION'},
        preceded_by: {action_type: 'DECISION'},
      }
      const trail = makeTrail([{action_type: 'DECISION'}, {action_type: 'DECISION'}])
      expect(violatingIds(await check([selfish], trail))).to.deep.equal([trail[0]!.id])
    })

    it('ignores approvals outside the scope', async () => {
      const trail = makeTrail([
        {...approval, at: 0},
        {...piiRead, at: 60_000},
      ])
      const scope = {since: new Date(Date.parse(trail[1]!.timestamp)).toISOString()}
      const report = await check([rule], trail, {scope})
      expect(violatingIds(report)).to.deep.equal([trail[1]!.id])
      expect(report.events_checked).to.equal(1)
    })

    it('agrees with a naive reference over random trails', async () => {
      const spec = fc.record({
        agent_id: fc.constantFrom('a', 'b'),
        action_type: fc.constantFrom('HUMAN_APPROVAL', 'DATA_ACCESS', 'TOOL_CALL'),
        at: fc.integer({min: 0, max: 4 * HOUR}),
      })
      await fc.assert(
        fc.asyncProperty(
          fc.array(spec, {maxLength: 60}),
          fc.constantFrom(undefined, '1h', '30m'),
          async (specs, within) => {
            const trail = makeTrail(specs)
            const rules = [
              {
                name: 'r',
                type: 'require_preceding',
                match: {action_type: 'DATA_ACCESS'},
                preceded_by: {action_type: 'HUMAN_APPROVAL'},
                ...(within ? {within} : {}),
              },
            ]
            const report = await check(rules, trail)
            expect(violatingIds(report)).to.deep.equal(
              naivePrecedingViolations(trail, within === undefined ? Infinity : within === '1h' ? HOUR : HOUR / 2),
            )
          },
        ),
        {numRuns: 300},
      )
    })
  })

  describe('max_rate', () => {
    const rule = {name: 'llm-rate', type: 'max_rate', match: {action_type: 'LLM_CALL'}, max: 3, per: '1m'}
    const llm = (at: number, agent_id = 'agent-a'): EventSpec => ({
      action_type: 'LLM_CALL',
      action_name: 'chat',
      agent_id,
      at,
    })

    it('passes with max events in a window', async () => {
      const trail = makeTrail([llm(0), llm(1000), llm(2000), {action_type: 'TOOL_CALL', at: 3000}, llm(60_000)])
      expect((await check([rule], trail)).passed).to.equal(true)
    })

    it('reports each matching event beyond max within `per`', async () => {
      const trail = makeTrail([llm(0), llm(1000), llm(2000), llm(3000), llm(4000)])
      const report = await check([rule], trail)
      expect(violatingIds(report)).to.deep.equal([trail[3]!.id, trail[4]!.id])
      expect(report.results[0]!.violations[0]!.message).to.equal(
        'LLM_CALL chat by agent "agent-a" is more than 3 events matching action_type=LLM_CALL within 1m.',
      )
    })

    it('puts events exactly `per` apart in different windows, and a millisecond less in the same one', async () => {
      const apart = makeTrail([llm(0), llm(0), llm(0), llm(60_000)])
      expect((await check([rule], apart)).passed).to.equal(true)
      const closer = makeTrail([llm(0), llm(0), llm(0), llm(59_999)])
      expect(violatingIds(await check([rule], closer))).to.deep.equal([closer[3]!.id])
    })

    it('counts each agent separately', async () => {
      const trail = makeTrail([llm(0, 'a'), llm(0, 'b'), llm(0, 'a'), llm(0, 'b'), llm(0, 'a'), llm(0, 'b')])
      expect((await check([rule], trail)).passed).to.equal(true)
    })

    it('agrees with the naive window reference over random trails', async () => {
      const spec = fc.record({
        agent_id: fc.constantFrom('a', 'b'),
        action_type: fc.constantFrom('LLM_CALL', 'TOOL_CALL'),
        at: fc.integer({min: 0, max: 180_000}),
      })
      await fc.assert(
        fc.asyncProperty(fc.array(spec, {maxLength: 80}), fc.integer({min: 0, max: 4}), async (specs, max) => {
          const trail = makeTrail(specs)
          const report = await check([{...rule, max}], trail)
          expect(violatingIds(report)).to.deep.equal(naiveRateViolations(trail, max, 60_000))
        }),
        {numRuns: 200},
      )
    })
  })
})

/** Naive: for each DATA_ACCESS, scan every earlier event of its agent for an approval in the window. */
function naivePrecedingViolations(trail: StoredEvent[], within: number): string[] {
  return trail
    .filter((event, i) => {
      if (event.action_type !== 'DATA_ACCESS') return false
      const t = Date.parse(event.timestamp)
      return !trail
        .slice(0, i)
        .some(
          (p) =>
            p.agent_id === event.agent_id &&
            p.action_type === 'HUMAN_APPROVAL' &&
            t - Date.parse(p.timestamp) <= within,
        )
    })
    .map((event) => event.id)
}

function naiveRateViolations(trail: StoredEvent[], max: number, per: number): string[] {
  const flagged = new Set<string>()
  for (const agent of new Set(trail.map((event) => event.agent_id))) {
    const mine = trail.filter((event) => event.agent_id === agent && event.action_type === 'LLM_CALL')
    naiveExceeded(
      mine.map((event) => Date.parse(event.timestamp)),
      max,
      per,
    ).forEach((over, k) => over && flagged.add(mine[k]!.id))
  }
  return trail.filter((event) => flagged.has(event.id)).map((event) => event.id)
}
