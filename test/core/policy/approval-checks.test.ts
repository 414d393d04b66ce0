/**
 * Oversight in `policy check` (docs/oversight.md): `require_approval` and rules with
 * `"action": "hold"` want a granted approval before each matching call that ran, found by the
 * request's parent_id; the report lists the held calls with their decisions.
 */
import {randomUUID} from 'node:crypto'
import {expect} from 'chai'
import {parsePolicyDocument} from '../../../src/core/policy/index.js'
import {servicesPerTest} from '../../support/harness.js'
import {formatPolicyReport} from '../../../src/cli/policy-report.js'

describe('policy check over held calls', () => {
  const ctx = servicesPerTest()

  async function call(name: string, status = 'success', approvedBy?: string): Promise<string> {
    const id = randomUUID()
    if (approvedBy !== undefined) {
      const approval = await ctx.services.approvals.request({
        agent_id: 'billing-bot',
        action_type: 'TOOL_CALL',
        action_name: name,
        call_event_id: id,
        rule: 'hold-payments',
        rule_type: 'forbidden_action',
      })
      await ctx.services.approvals.decide(approval.id, {decision: 'approve', reason: 'ok'}, approvedBy)
    }
    await ctx.services.ingest.recordOne({
      id,
      agent_id: 'billing-bot',
      action_type: 'TOOL_CALL',
      action_name: name,
      action_status: status,
    })
    return id
  }

  const check = (policies: unknown[], scope?: unknown) =>
    ctx.services.policy.check(parsePolicyDocument(scope === undefined ? {policies} : {policies, scope}))

  it('require_approval: a call that ran without a granted approval before it is a violation', async () => {
    await call('payments.refund', 'success', 'alice')
    const unapproved = await call('payments.refund')
    await call('payments.refund', 'denied')
    await call('files.read')
    const report = await check([{name: 'approved', type: 'require_approval', match: {action_name: 'payments.*'}}], {
      agent_id: 'billing-bot',
    })
    expect(report.passed).to.equal(false)
    expect(report.results[0]!.violation_count).to.equal(1)
    expect(report.results[0]!.violations[0]!.event_id).to.equal(unapproved)
    expect(report.approvals).to.have.length(1)
    expect(report.approvals![0]).to.include({state: 'approved', decided_by: 'alice', reason: 'ok'})
  })

  it('a hold rule passes when every call it flags was approved, and names the rule otherwise', async () => {
    const hold = {name: 'hold-payments', type: 'forbidden_action', match: {action_name: 'payments.*'}, action: 'hold'}
    await call('payments.refund', 'success', 'bob')
    expect((await check([hold])).passed).to.equal(true)
    await call('payments.charge')
    const report = await check([hold])
    expect(report.results[0]!.violation_count).to.equal(1)
    expect(report.results[0]!.violations[0]!.message).to.match(/held by rule "hold-payments".*without a granted/)
  })

  it('refuses an unknown action', () => {
    expect(() =>
      parsePolicyDocument({
        policies: [{name: 'x', type: 'forbidden_action', match: {action_name: 'a'}, action: 'ask'}],
      }),
    ).to.throw(/must be one of refuse, hold/)
  })
})

describe('policy check text report', () => {
  it('lists the held calls with their decisions', () => {
    const text = formatPolicyReport(
      {
        passed: true,
        events_checked: 3,
        results: [],
        approvals: [
          {
            approval_id: 'a',
            agent_id: 'billing-bot',
            action_name: 'payments.refund',
            call_event_id: 'c',
            rule: 'hold-payments',
            requested_at: '2026-12-06T04:20:00.000Z',
            state: 'approved',
            decided_by: 'alice',
            reason: 'ticket 42',
          },
        ],
      },
      'text',
    )
    expect(text).to.contain('held calls: 1')
    expect(text).to.contain('billing-bot payments.refund (rule hold-payments) approved by alice: ticket 42')
  })
})
