/**
 * Oversight in `policy check` (docs/oversight.md): the approvals of the log, read from the events
 * of `audit-trail:approvals` whatever the scope (they are the service's, about the agents' calls),
 * and the rules that want a granted approval before a call: `require_approval`, and any rule with
 * `"action": "hold"`. A call's approval is found by the request's `call_event_id` label (its
 * `parent_id`), which the hash covers and no erasure removes.
 */
import {APPROVAL_GRANTED, APPROVAL_REQUESTED, APPROVALS_AGENT} from '../approval/events.js'
import type {EventHeader} from '../types.js'
import type {RuleChecker} from './context.js'
import {compileMatcher} from './matcher.js'
import type {RequireApprovalRule, Rule} from './rule.js'
import {describeEvent, ViolationList} from './violation.js'

/** A held call as the report lists it. */
export interface HeldCallReport {
  approval_id: string
  agent_id: string
  action_name: string
  call_event_id: string
  rule: string
  requested_at: string
  state: string
  decided_by: string | null
  reason: string | null
}

export class ApprovalLedger {
  readonly #requests = new Map<string, HeldCallReport>()
  /** The call event ids with a granted approval recorded so far. */
  readonly #granted = new Set<string>()

  /** Reads an event of `audit-trail:approvals`; false for any other event. */
  observe(event: EventHeader): boolean {
    if (event.agent_id !== APPROVALS_AGENT) return false
    const labels = event.labels
    if (event.action_type === APPROVAL_REQUESTED) {
      this.#requests.set(event.id, {
        approval_id: event.id,
        agent_id: labels.agent_id ?? '',
        action_name: event.action_name,
        call_event_id: labels.call_event_id ?? '',
        rule: labels.rule ?? '',
        requested_at: event.timestamp,
        state: 'pending',
        decided_by: null,
        reason: null,
      })
      return true
    }
    const request = this.#requests.get(labels.approval_id ?? '')
    if (request === undefined || request.state !== 'pending') return true
    request.state = labels.outcome ?? (event.action_type === APPROVAL_GRANTED ? 'approved' : 'denied')
    request.decided_by = labels.decided_by ?? null
    request.reason = labels.reason ?? null
    if (event.action_type === APPROVAL_GRANTED) this.#granted.add(request.call_event_id)
    return true
  }

  /** Whether the call event `id` had a granted approval recorded before it. */
  granted(id: string): boolean {
    return this.#granted.has(id)
  }

  /** The held calls whose agent and request time `inScope` accepts, in request order. */
  held(inScope: (agentId: string, timestamp: string) => boolean): HeldCallReport[] {
    return [...this.#requests.values()].filter((r) => inScope(r.agent_id, r.requested_at))
  }
}

/** An event that ran (a refused call is `denied`) without a granted approval; approvals themselves are no calls. */
function ranUnapproved(event: EventHeader, ledger: ApprovalLedger): boolean {
  return event.agent_id !== APPROVALS_AGENT && event.action_status !== 'denied' && !ledger.granted(event.id)
}

/** A call that ran (not refused: `denied`) matching `match`, with no granted approval before it. */
export function checkRequireApproval(rule: RequireApprovalRule, ledger: ApprovalLedger): RuleChecker {
  const violations = new ViolationList()
  const applies = compileMatcher(rule.match)
  return {
    rule,
    violations,
    observe(event: EventHeader) {
      if (!ranUnapproved(event, ledger) || !applies(event)) return
      violations.addEvent(
        event,
        () => `${describeEvent(event)} by agent "${event.agent_id}" has no granted approval before it.`,
      )
    },
  }
}

/**
 * A rule with `"action": "hold"`: the calls it flags are violations only when they ran without a
 * granted approval (a held call the proxy refused is recorded `denied`, and did not run).
 */
export function holdingChecker(base: RuleChecker, ledger: ApprovalLedger): RuleChecker {
  const violations = new ViolationList()
  return {
    rule: base.rule,
    violations,
    observe(event: EventHeader) {
      if (!ranUnapproved(event, ledger)) return
      const before = base.violations.count
      base.observe!(event)
      if (base.violations.count === before) return
      violations.addEvent(
        event,
        () =>
          `${describeEvent(event)} by agent "${event.agent_id}" is held by rule "${base.rule.name}" ` +
          'and ran without a granted approval.',
      )
    },
  }
}

/** Whether a document's rules read approvals (and so need every agent's events, the service's included). */
export function readsApprovals(rules: readonly Rule[]): boolean {
  return rules.some((rule) => rule.type === 'require_approval' || ('action' in rule && rule.action === 'hold'))
}
