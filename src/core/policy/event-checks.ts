/**
 * Rules decided by one event alone (docs/api.md, Policy): `required_labels`,
 * `forbidden_action`, `allowed_actions`. They keep no state, so memory stays constant.
 */
import type {EventHeader} from '../types.js'
import type {RuleChecker} from './context.js'
import {compileGlob, compileMatcher, type EventTest} from './matcher.js'
import type {AllowedActionsRule, ForbiddenActionRule, RequiredLabelsRule} from './rule.js'
import {describeEvent, ViolationList} from './violation.js'

const matchAll: EventTest = () => true

/** A matching event lacks one of the labels: one violation per event, naming every missing key. */
export function checkRequiredLabels(rule: RequiredLabelsRule): RuleChecker {
  const violations = new ViolationList()
  const applies = rule.match ? compileMatcher(rule.match) : matchAll
  return {
    rule,
    violations,
    observe(event: EventHeader) {
      if (!applies(event)) return
      const missing = rule.labels.filter((key) => !Object.hasOwn(event.labels, key))
      if (missing.length === 0) return
      violations.addEvent(event, () => {
        const names = missing.map((key) => `"${key}"`).join(', ')
        return `${describeEvent(event)} is missing the required label${missing.length === 1 ? '' : 's'} ${names}.`
      })
    },
  }
}

/** Any event matching `match` is a violation. */
export function checkForbiddenAction(rule: ForbiddenActionRule): RuleChecker {
  const violations = new ViolationList()
  const forbidden = compileMatcher(rule.match)
  return {
    rule,
    violations,
    observe(event: EventHeader) {
      if (forbidden(event))
        violations.addEvent(event, () => `${describeEvent(event)} by agent "${event.agent_id}" is a forbidden action.`)
    },
  }
}

/** An event of an agent the rule covers (`agent_id` glob, or every agent) that matches no entry. */
export function checkAllowedActions(rule: AllowedActionsRule): RuleChecker {
  const violations = new ViolationList()
  const covers = rule.agent_id === undefined ? () => true : compileGlob(rule.agent_id)
  const allowed = rule.match.map(compileMatcher)
  return {
    rule,
    violations,
    observe(event: EventHeader) {
      if (!covers(event.agent_id) || allowed.some((test) => test(event))) return
      violations.addEvent(
        event,
        () => `${describeEvent(event)} by agent "${event.agent_id}" is not among the allowed actions.`,
      )
    },
  }
}
