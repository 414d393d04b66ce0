import {expect} from 'chai'
import {checkPolicies, MAX_LISTED_VIOLATIONS, parsePolicyDocument} from '../../../src/core/policy/index.js'
import {check, makeTrail, recordingContext, streamOf, violatingIds} from './trail.js'

const forbidShell = {name: 'no-shell', type: 'forbidden_action', match: {action_name: 'shell.*'}}

describe('policy check', () => {
  it('passes only when every rule passes, with results in the document’s order', async () => {
    const trail = makeTrail([{action_name: 'shell.exec'}, {action_name: 'web.search'}])
    const report = await check([{name: 'chains', type: 'chain_integrity'}, forbidShell], trail)
    expect(report.passed).to.equal(false)
    expect(report.events_checked).to.equal(2)
    expect(report.results.map((result) => [result.name, result.type, result.passed])).to.deep.equal([
      ['chains', 'chain_integrity', true],
      ['no-shell', 'forbidden_action', false],
    ])
  })

  it('passes an empty document over any trail', async () => {
    expect(await check([], makeTrail([{}, {}]))).to.deep.equal({passed: true, events_checked: 2, results: []})
  })

  it('lists at most 100 violations per rule and counts them all', async () => {
    const trail = makeTrail(Array.from({length: 250}, () => ({action_name: 'shell.exec'})))
    const result = (await check([forbidShell], trail)).results[0]!
    expect(MAX_LISTED_VIOLATIONS).to.equal(100)
    expect(result.violation_count).to.equal(250)
    expect(result.violations).to.have.length(100)
    expect(result.violations.map((violation) => violation.event_id)).to.deep.equal(
      trail.slice(0, 100).map((event) => event.id),
    )
  })

  describe('scope', () => {
    const trail = makeTrail([
      {agent_id: 'a', action_name: 'shell.1'},
      {agent_id: 'b', action_name: 'shell.2'},
      {agent_id: 'a', action_name: 'shell.3'},
      {agent_id: 'b', action_name: 'shell.4'},
    ])

    it('takes since inclusively and until exclusively, against the event timestamp', async () => {
      const report = await check([forbidShell], trail, {
        scope: {since: trail[1]!.timestamp, until: trail[3]!.timestamp},
      })
      expect(report.events_checked).to.equal(2)
      expect(violatingIds(report)).to.deep.equal([trail[1]!.id, trail[2]!.id])
    })

    it('compares times, not strings, when the scope has an offset', async () => {
      // trail[1] is 12:00:01Z = 13:00:01+01:00.
      const report = await check([forbidShell], trail, {scope: {since: '2026-03-01T13:00:01+01:00'}})
      expect(violatingIds(report)).to.deep.equal([trail[1]!.id, trail[2]!.id, trail[3]!.id])
    })

    it('keeps one agent, even when the caller did not pre-filter', async () => {
      const report = await check([forbidShell], trail, {scope: {agent_id: 'b'}})
      expect(report.events_checked).to.equal(2)
      expect(violatingIds(report)).to.deep.equal([trail[1]!.id, trail[3]!.id])
    })

    it('takes agent_id exactly, not as a pattern', async () => {
      const report = await check([forbidShell], trail, {scope: {agent_id: '*'}})
      expect(report.events_checked).to.equal(0)
      expect(report.passed).to.equal(true)
    })

    it('leaves out-of-scope events out of per-agent counts', async () => {
      const failures = makeTrail([{action_status: 'failure'}, {action_status: 'failure'}, {}, {}])
      const rule = {name: 'failures', type: 'max_failure_rate', max: 0.5}
      expect((await check([rule], failures)).passed).to.equal(true)
      expect((await check([rule], failures, {scope: {until: failures[3]!.timestamp}})).passed).to.equal(false)
    })
  })

  it('reads the events in one pass, as an async iterable', async () => {
    let pulled = 0
    const trail = makeTrail([{}, {}, {}])
    async function* counted() {
      for (const event of trail) {
        pulled++
        yield [event]
      }
    }
    const doc = parsePolicyDocument({policies: [forbidShell]})
    const report = await checkPolicies(doc, counted(), recordingContext().context)
    expect(pulled).to.equal(3)
    expect(report.events_checked).to.equal(3)
    expect((await checkPolicies(doc, streamOf([]), recordingContext().context)).events_checked).to.equal(0)
  })
})
