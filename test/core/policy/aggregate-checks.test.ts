import {expect} from 'chai'
import {BASE_TIME, check, makeTrail, recordingContext, type EventSpec} from './trail.js'

const statuses = (...list: string[]): EventSpec[] => list.map((action_status) => ({action_status}))

describe('policy rules decided at the end', () => {
  describe('max_failure_rate', () => {
    const rule = {name: 'failures', type: 'max_failure_rate', max: 0.2}

    it('passes at exactly the maximum (2 of 10 against 0.2)', async () => {
      const trail = makeTrail(statuses('failure', 'error', ...Array(8).fill('success')))
      expect((await check([rule], trail)).passed).to.equal(true)
    })

    it('fails just above it (3 of 10), once per agent, with the numbers in the message', async () => {
      const trail = makeTrail([
        ...statuses('failure', 'error', 'failure', ...Array(7).fill('success')),
        {agent_id: 'healthy'},
      ])
      const report = await check([rule], trail)
      expect(report.results[0]!.violations).to.deep.equal([
        {
          event_id: null,
          agent_id: 'agent-a',
          sequence: null,
          message: 'Agent "agent-a" has 3 of 10 events with status failure or error (30%), above the maximum of 20%.',
        },
      ])
    })

    it('compares exactly at decimal fractions (1 of 10 against 0.1 passes)', async () => {
      const trail = makeTrail(statuses('failure', ...Array(9).fill('success')))
      expect((await check([{...rule, max: 0.1}], trail)).passed).to.equal(true)
      expect((await check([{...rule, max: 0.09}], trail)).passed).to.equal(false)
    })

    it('skips agents with fewer than min_events events', async () => {
      const trail = makeTrail(statuses('failure', 'failure', 'success'))
      expect((await check([{...rule, min_events: 4}], trail)).passed).to.equal(true)
      expect((await check([{...rule, min_events: 3}], trail)).passed).to.equal(false)
    })

    it('counts only the given statuses', async () => {
      const trail = makeTrail(statuses('timeout', 'denied', 'failure', 'success'))
      const report = await check([{...rule, max: 0.3, statuses: ['timeout', 'denied']}], trail)
      expect(report.results[0]!.violations[0]!.message).to.equal(
        'Agent "agent-a" has 2 of 4 events with status timeout or denied (50%), above the maximum of 30%.',
      )
    })

    it('with max 0, flags a single failure', async () => {
      expect((await check([{...rule, max: 0}], makeTrail(statuses('success', 'error')))).passed).to.equal(false)
    })
  })

  describe('chain_integrity', () => {
    const rule = {name: 'chains', type: 'chain_integrity'}

    it('passes when every agent in scope verifies, asking once for those agents in order of appearance', async () => {
      const {context, calls} = recordingContext()
      const trail = makeTrail([{agent_id: 'b'}, {agent_id: 'a'}, {agent_id: 'b'}, {agent_id: 'c'}])
      const report = await check([rule, {...rule, name: 'again'}], trail, {
        context,
        scope: {until: trail[3]!.timestamp},
      })
      expect(report.passed).to.equal(true)
      expect(calls.verifyAgents).to.deep.equal([['b', 'a']])
    })

    it('reports each invalid agent with where its chain breaks', async () => {
      const {context} = recordingContext({
        verifyAgents: async (ids) =>
          ids.map((agent_id) =>
            agent_id === 'b'
              ? {
                  agent_id,
                  valid: false,
                  first_invalid_sequence: 2,
                  first_invalid_event_id: 'e-2',
                  reason: 'hash_mismatch',
                }
              : {agent_id, valid: true},
          ),
      })
      const report = await check([rule], makeTrail([{agent_id: 'a'}, {agent_id: 'b'}]), {context})
      expect(report.results[0]!.violations).to.deep.equal([
        {
          event_id: 'e-2',
          agent_id: 'b',
          sequence: 2,
          message: 'The hash chain of agent "b" does not verify: hash_mismatch at sequence 2.',
        },
      ])
    })

    it('treats an agent missing from the verification as not verified', async () => {
      const {context} = recordingContext({verifyAgents: async () => []})
      const report = await check([rule], makeTrail([{agent_id: 'a'}]), {context})
      expect(report.results[0]!.violations[0]).to.deep.equal({
        event_id: null,
        agent_id: 'a',
        sequence: null,
        message: 'The hash chain of agent "a" does not verify: it was not verified.',
      })
    })

    it('does not ask when no agent is in scope', async () => {
      const {context, calls} = recordingContext()
      expect((await check([rule], [], {context})).passed).to.equal(true)
      expect(calls.verifyAgents).to.deep.equal([])
    })
  })

  describe('timestamp_freshness', () => {
    const rule = {name: 'fresh', type: 'timestamp_freshness', max_age: '1h'}
    const at = (ms: number) => new Date(BASE_TIME + ms).toISOString()

    it('passes with a valid timestamp exactly max_age old, fails a millisecond later', async () => {
      const fresh = recordingContext({
        now: new Date(BASE_TIME + 3_600_000),
        latestTimestamp: async () => ({timestamp: at(0), valid: true}),
      })
      expect((await check([rule], [], {context: fresh.context})).passed).to.equal(true)
      const stale = recordingContext({
        now: new Date(BASE_TIME + 3_600_001),
        latestTimestamp: async () => ({timestamp: at(0), valid: true}),
      })
      const report = await check([rule], [], {context: stale.context})
      expect(report.results[0]!.violations).to.deep.equal([
        {
          event_id: null,
          agent_id: null,
          sequence: null,
          message:
            'The latest timestamp (2026-03-01T12:00:00.000Z) is 1h 0.001s old, older than the maximum age of 1h.',
        },
      ])
    })

    it('fails when no timestamp exists', async () => {
      const {context} = recordingContext({latestTimestamp: async () => null})
      const report = await check([rule], [], {context})
      expect(report.results[0]!.violations).to.deep.equal([
        {event_id: null, agent_id: null, sequence: null, message: 'No timestamp has been issued for the Merkle root.'},
      ])
    })

    it('fails when the latest timestamp does not verify, and says why', async () => {
      const {context} = recordingContext({
        latestTimestamp: async () => ({timestamp: at(0), valid: false, error: 'signature does not verify'}),
      })
      const report = await check([rule], [], {context})
      expect(report.results[0]!.violations.map((violation) => violation.message)).to.deep.equal([
        'The latest timestamp (2026-03-01T12:00:00.000Z) does not verify: signature does not verify.',
      ])
    })

    it('asks once however many rules need it, and not at all when none does', async () => {
      const shared = recordingContext()
      await check([rule, {...rule, name: 'fresher', max_age: '30m'}], [], {context: shared.context})
      expect(shared.calls.latestTimestamp).to.equal(1)
      const unused = recordingContext()
      await check([{name: 'chains', type: 'chain_integrity'}], makeTrail([{}]), {context: unused.context})
      expect(unused.calls.latestTimestamp).to.equal(0)
    })
  })
})
