/**
 * Rules about time within one agent's chain (docs/api.md, Policy): `require_preceding`
 * and `max_rate`. Events of an agent arrive in sequence order (index order preserves it), so
 * "earlier" means earlier in the chain, which the hash chain proves, rather than an earlier
 * client-supplied timestamp. State is a few numbers per agent, never the events themselves.
 */
import type {EventHeader} from '../types.js'
import type {RuleChecker} from './context.js'
import {parseDuration} from './duration.js'
import {compileMatcher, describeMatcher} from './matcher.js'
import {RateWindow} from './rate-window.js'
import type {MaxRateRule, RequirePrecedingRule} from './rule.js'
import {describeEvent, ViolationList} from './violation.js'

/**
 * A matching event E is preceded when an earlier event P of the same agent (lower sequence, in
 * scope) matches `preceded_by` and, when `within` is given, E.timestamp - P.timestamp <= within.
 * A P stamped later than E still counts: the chain says it came first. Keeping the latest
 * timestamp of any P so far is therefore exact, because if any P satisfies the bound, the one with
 * the latest timestamp does. An event never precedes itself.
 */
export function checkRequirePreceding(rule: RequirePrecedingRule): RuleChecker {
  const violations = new ViolationList()
  const applies = compileMatcher(rule.match)
  const precedes = compileMatcher(rule.preceded_by)
  const withinMs = rule.within === undefined ? Infinity : parseDuration(rule.within)
  const latestPreceding = new Map<string, number>()
  return {
    rule,
    violations,
    observe(event: EventHeader) {
      const isMatch = applies(event)
      const isPredecessor = precedes(event)
      if (!isMatch && !isPredecessor) return
      const time = Date.parse(event.timestamp)
      const latest = latestPreceding.get(event.agent_id)
      if (isMatch && (latest === undefined || time - latest > withinMs))
        violations.addEvent(event, () => describeMissing(rule, event))
      if (isPredecessor && (latest === undefined || time > latest)) latestPreceding.set(event.agent_id, time)
    },
  }
}

function describeMissing(rule: RequirePrecedingRule, event: EventHeader): string {
  const window = rule.within === undefined ? '' : ` within ${rule.within} before it`
  return (
    `${describeEvent(event)} by agent "${event.agent_id}" has no earlier event matching ` +
    `${describeMatcher(rule.preceded_by)}${window}.`
  )
}

/** One violation per matching event that brings its agent above `max` within a window of `per`. */
export function checkMaxRate(rule: MaxRateRule): RuleChecker {
  const violations = new ViolationList()
  const applies = compileMatcher(rule.match)
  const perMs = parseDuration(rule.per)
  const windows = new Map<string, RateWindow>()
  return {
    rule,
    violations,
    observe(event: EventHeader) {
      if (!applies(event)) return
      let window = windows.get(event.agent_id)
      if (window === undefined) windows.set(event.agent_id, (window = new RateWindow(rule.max, perMs)))
      if (!window.add(Date.parse(event.timestamp))) return
      violations.addEvent(
        event,
        () =>
          `${describeEvent(event)} by agent "${event.agent_id}" is more than ${rule.max} events matching ` +
          `${describeMatcher(rule.match)} within ${rule.per}.`,
      )
    },
  }
}
