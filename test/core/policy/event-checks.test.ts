import {expect} from 'chai'
import {check, makeTrail, violatingIds} from './trail.js'

describe('policy rules decided per event', () => {
  describe('required_labels', () => {
    const rule = {
      name: 'ticketed',
      type: 'required_labels',
      labels: ['ticket', 'env'],
      match: {action_type: 'DATA_ACCESS'},
    }

    it('passes when every matching event carries the labels (an empty value counts)', async () => {
      const trail = makeTrail([
        {action_type: 'DATA_ACCESS', labels: {ticket: 'OPS-1', env: ''}},
        {action_type: 'TOOL_CALL'}, // not matched, needs nothing
      ])
      const report = await check([rule], trail)
      expect(report.passed).to.equal(true)
      expect(report.results[0]).to.deep.equal({
        name: 'ticketed',
        type: 'required_labels',
        passed: true,
        violation_count: 0,
        violations: [],
      })
    })

    it('reports each matching event that lacks a label, naming every missing key', async () => {
      const trail = makeTrail([
        {action_type: 'DATA_ACCESS', action_name: 'pii.customers', labels: {env: 'prod'}},
        {action_type: 'DATA_ACCESS', labels: {ticket: 'OPS-2', env: 'prod'}},
        {agent_id: 'agent-b', action_type: 'DATA_ACCESS', action_name: 'orders', labels: {Ticket: 'case differs'}},
      ])
      const report = await check([rule], trail)
      expect(report.passed).to.equal(false)
      expect(report.results[0]!.violation_count).to.equal(2)
      expect(report.results[0]!.violations).to.deep.equal([
        {
          event_id: trail[0]!.id,
          agent_id: 'agent-a',
          sequence: 1,
          message: 'DATA_ACCESS pii.customers is missing the required label "ticket".',
        },
        {
          event_id: trail[2]!.id,
          agent_id: 'agent-b',
          sequence: 1,
          message: 'DATA_ACCESS orders is missing the required labels "ticket", "env".',
        },
      ])
    })

    it('applies to every event when match is absent', async () => {
      const report = await check(
        [{name: 'env', type: 'required_labels', labels: ['env']}],
        makeTrail([{}, {labels: {env: 'x'}}, {action_type: 'MESSAGE'}]),
      )
      expect(report.results[0]!.violation_count).to.equal(2)
    })
  })

  describe('forbidden_action', () => {
    const rule = {name: 'no-shell', type: 'forbidden_action', match: {action_type: 'TOOL_CALL', action_name: 'shell.*'}}

    it('passes when nothing matches', async () => {
      const report = await check(
        [rule],
        makeTrail([{action_name: 'shell'}, {action_type: 'LLM_CALL', action_name: 'shell.exec'}]),
      )
      expect(report.passed).to.equal(true)
    })

    it('reports every matching event', async () => {
      const trail = makeTrail([
        {action_name: 'shell.exec'},
        {action_name: 'web.search'},
        {agent_id: 'b', action_name: 'shell.'},
      ])
      const report = await check([rule], trail)
      expect(violatingIds(report)).to.deep.equal([trail[0]!.id, trail[2]!.id])
      expect(report.results[0]!.violations[0]!.message).to.equal(
        'TOOL_CALL shell.exec by agent "agent-a" is a forbidden action.',
      )
    })

    it('matches on labels and status too', async () => {
      const byLabel = {
        name: 'no-prod-writes',
        type: 'forbidden_action',
        match: {action_status: 'success', labels: {env: 'prod', op: 'write*'}},
      }
      const trail = makeTrail([
        {labels: {env: 'prod', op: 'write'}},
        {labels: {env: 'prod', op: 'writeback'}, action_status: 'denied'},
        {labels: {env: 'prod', op: 'read'}},
        {labels: {env: 'prod', op: 'write_all'}},
      ])
      expect(violatingIds(await check([byLabel], trail))).to.deep.equal([trail[0]!.id, trail[3]!.id])
    })
  })

  describe('allowed_actions', () => {
    const rule = {
      name: 'research-allow-list',
      type: 'allowed_actions',
      agent_id: 'research-*',
      match: [{action_type: 'LLM_CALL'}, {action_type: 'TOOL_CALL', action_name: 'web.*'}],
    }

    it('passes when every event of a covered agent matches an entry', async () => {
      const trail = makeTrail([
        {agent_id: 'research-1', action_type: 'LLM_CALL', action_name: 'gpt'},
        {agent_id: 'research-2', action_type: 'TOOL_CALL', action_name: 'web.fetch'},
        {agent_id: 'ops-1', action_type: 'TOOL_CALL', action_name: 'shell.exec'}, // not covered
      ])
      expect((await check([rule], trail)).passed).to.equal(true)
    })

    it('reports events of covered agents that match no entry', async () => {
      const trail = makeTrail([
        {agent_id: 'research-1', action_type: 'TOOL_CALL', action_name: 'shell.exec'},
        {agent_id: 'research-1', action_type: 'FILE_ACCESS', action_name: 'web.fetch'},
        {agent_id: 'xresearch-1', action_type: 'FILE_ACCESS'},
      ])
      const report = await check([rule], trail)
      expect(violatingIds(report)).to.deep.equal([trail[0]!.id, trail[1]!.id])
      expect(report.results[0]!.violations[1]).to.deep.include({
        sequence: 2,
        message: 'FILE_ACCESS web.fetch by agent "research-1" is not among the allowed actions.',
      })
    })

    it('covers every agent when agent_id is absent', async () => {
      const everyone = {name: 'llm-only', type: 'allowed_actions', match: [{action_type: 'LLM_CALL'}]}
      const report = await check(
        [everyone],
        makeTrail([{agent_id: 'x', action_type: 'LLM_CALL'}, {agent_id: 'y'}, {agent_id: 'z'}]),
      )
      expect(report.results[0]!.violation_count).to.equal(2)
    })
  })
})
