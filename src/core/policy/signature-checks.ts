/**
 * `signed_events` (docs/policy.md): every event of the agents the rule covers carries a valid
 * signature by a key its agent had at that point of the log (docs/signatures.md). The service's
 * own events (agent ids beginning with `audit-trail:`) are signed by no agent and never covered.
 */
import {RESERVED_AGENT_PREFIX} from '../event/validate.js'
import type {EventHeader} from '../types.js'
import type {PolicyContext, RuleChecker, SignatureReasons} from './context.js'
import {compileGlob} from './matcher.js'
import type {SignedEventsRule} from './rule.js'
import {describeEvent, ViolationList} from './violation.js'

export function checkSignedEvents(rule: SignedEventsRule): RuleChecker {
  const violations = new ViolationList()
  const covers = rule.agent_id === undefined ? () => true : compileGlob(rule.agent_id)
  let reasonOf: SignatureReasons = () => undefined
  return {
    rule,
    violations,
    async prepare(context: PolicyContext) {
      reasonOf = await context.signatureReasons()
    },
    observe(event: EventHeader) {
      if (event.agent_id.startsWith(RESERVED_AGENT_PREFIX) || !covers(event.agent_id)) return
      const reason = reasonOf(event.agent_id, event.sequence)
      if (reason === undefined) return
      violations.addEvent(
        event,
        () => `${describeEvent(event)} by agent "${event.agent_id}" has no valid signature of its agent: ${reason}.`,
      )
    },
  }
}
