/**
 * POST /v1/policy/check (docs/api.md, Policy): every rule of a document evaluated over
 * the events in scope in one streaming pass. Memory is bounded by per-agent state, never by the
 * number of events, so a million-event trail is checked without holding it.
 */
import {parseTime} from '../query-params.js'
import type {EventHeader} from '../types.js'
import {checkChainIntegrity, checkMaxFailureRate, checkTimestampFreshness} from './aggregate-checks.js'
import {createCheckEnd, type PolicyContext, type RuleChecker} from './context.js'
import type {PolicyDocument, PolicyScope} from './document.js'
import {checkAllowedActions, checkForbiddenAction, checkRequiredLabels} from './event-checks.js'
import type {Rule} from './rule.js'
import {checkMaxRate, checkRequirePreceding} from './timing-checks.js'
import {checkSignedEvents} from './signature-checks.js'
import type {RuleResult} from './violation.js'
import {ApprovalLedger, checkRequireApproval, holdingChecker, type HeldCallReport} from './approval-checks.js'
import {holds} from './rule.js'

export interface PolicyReport {
  passed: boolean
  events_checked: number
  results: RuleResult[]
  /** The held calls in scope with their decisions (docs/oversight.md); absent when there were none. */
  approvals?: HeldCallReport[]
}

/**
 * Checks a validated document against every stored event in index order, given in batches (a
 * batch at a time keeps a million events from costing a million awaits; a caller may
 * pre-filter by `scope.agent_id`; the whole scope is applied here either way). Events outside the
 * scope are neither checked nor counted, nor can they satisfy a rule (such as an approval before
 * `since` for `require_preceding`), so the answer does not depend on how much the caller filtered.
 */
export async function checkPolicies(
  doc: PolicyDocument,
  batches: AsyncIterable<readonly EventHeader[]>,
  context: PolicyContext,
): Promise<PolicyReport> {
  const ledger = new ApprovalLedger()
  const checkers = doc.policies.map((rule) => createChecker(rule, ledger))
  const observers = checkers.filter((checker) => checker.observe !== undefined)
  const inScope = compileScope(doc.scope ?? {})
  const agents = new Set<string>()
  let checked = 0
  for (const checker of checkers) await checker.prepare?.(context)
  for await (const batch of batches) {
    for (const event of batch) {
      // Approvals are read whatever the scope: they are about the calls in it (approval-checks.ts).
      ledger.observe(event)
      if (!inScope(event)) continue
      checked++
      agents.add(event.agent_id)
      for (const checker of observers) checker.observe!(event)
    }
  }
  const end = createCheckEnd(context, [...agents])
  for (const checker of checkers) await checker.finish?.(end)
  const results = checkers.map((checker) => checker.violations.resultFor(checker.rule))
  const report: PolicyReport = {passed: results.every((result) => result.passed), events_checked: checked, results}
  const held = ledger.held((agent_id, timestamp) => inScope({agent_id, timestamp} as EventHeader))
  if (held.length > 0) report.approvals = held
  return report
}

function createChecker(rule: Rule, ledger: ApprovalLedger): RuleChecker {
  const checker = createRuleChecker(rule, ledger)
  return holds(rule) ? holdingChecker(checker, ledger) : checker
}

function createRuleChecker(rule: Rule, ledger: ApprovalLedger): RuleChecker {
  switch (rule.type) {
    case 'chain_integrity':
      return checkChainIntegrity(rule)
    case 'required_labels':
      return checkRequiredLabels(rule)
    case 'forbidden_action':
      return checkForbiddenAction(rule)
    case 'allowed_actions':
      return checkAllowedActions(rule)
    case 'require_preceding':
      return checkRequirePreceding(rule)
    case 'max_failure_rate':
      return checkMaxFailureRate(rule)
    case 'max_rate':
      return checkMaxRate(rule)
    case 'timestamp_freshness':
      return checkTimestampFreshness(rule)
    case 'signed_events':
      return checkSignedEvents(rule)
    case 'require_approval':
      return checkRequireApproval(rule, ledger)
  }
}

/**
 * `agent_id` exact; `since` inclusive and `until` exclusive against the event's timestamp. Stored
 * timestamps are normalised to fixed-width UTC `YYYY-MM-DDTHH:mm:ss.sssZ` (docs/api.md), so
 * comparing them as strings with the bounds in the same form compares the instants, without
 * parsing a million dates.
 */
function compileScope(scope: PolicyScope): (event: EventHeader) => boolean {
  const since = scope.since === undefined ? undefined : parseTime(scope.since, 'since', [])
  const until = scope.until === undefined ? undefined : parseTime(scope.until, 'until', [])
  const agent = scope.agent_id
  return (event) =>
    (agent === undefined || event.agent_id === agent) &&
    (since === undefined || event.timestamp >= since) &&
    (until === undefined || event.timestamp < until)
}
