/**
 * Rules decided once the whole scope has been seen (docs/api.md, Policy):
 * `max_failure_rate` (per agent counts), `chain_integrity` (the caller's chain verification) and
 * `timestamp_freshness` (the caller's check of the latest RFC 3161 timestamp).
 */
import type {EventHeader} from '../types.js'
import type {CheckEnd, RuleChecker} from './context.js'
import {formatDuration, parseDuration} from './duration.js'
import type {ChainIntegrityRule, MaxFailureRateRule, TimestampFreshnessRule} from './rule.js'
import {ViolationList} from './violation.js'

const DEFAULT_FAILURE_STATUSES = ['failure', 'error']

/**
 * Per agent, the fraction of in-scope events whose status is in `statuses` must not exceed `max`
 * (equal passes). Agents with fewer than `min_events` (default 1) events in scope are skipped.
 */
export function checkMaxFailureRate(rule: MaxFailureRateRule): RuleChecker {
  const violations = new ViolationList()
  const failing = new Set(rule.statuses ?? DEFAULT_FAILURE_STATUSES)
  const minEvents = rule.min_events ?? 1
  const counts = new Map<string, {total: number; failed: number}>()
  return {
    rule,
    violations,
    observe(event: EventHeader) {
      let count = counts.get(event.agent_id)
      if (count === undefined) counts.set(event.agent_id, (count = {total: 0, failed: 0}))
      count.total++
      if (failing.has(event.action_status)) count.failed++
    },
    async finish() {
      for (const [agent, {total, failed}] of counts) {
        // Integer division is correctly rounded, so 1/10 against max 0.1 compares equal and passes.
        if (total < minEvents || failed / total <= rule.max) continue
        const message =
          `Agent "${agent}" has ${failed} of ${total} events with status ${[...failing].join(' or ')} ` +
          `(${percent(failed / total)}), above the maximum of ${percent(rule.max)}.`
        violations.add({event_id: null, agent_id: agent, sequence: null, message})
      }
    },
  }
}

function percent(fraction: number): string {
  return `${Number((fraction * 100).toFixed(2))}%`
}

/** One violation per agent in scope whose whole chain does not verify (or was not verified). */
export function checkChainIntegrity(rule: ChainIntegrityRule): RuleChecker {
  const violations = new ViolationList()
  return {
    rule,
    violations,
    async finish(end: CheckEnd) {
      const results = new Map((await end.verifyAgents()).map((result) => [result.agent_id, result]))
      for (const agent of end.agents) {
        const result = results.get(agent)
        if (result?.valid) continue
        const at = result?.first_invalid_sequence === undefined ? '' : ` at sequence ${result.first_invalid_sequence}`
        const reason = result === undefined ? 'it was not verified' : `${result.reason ?? 'invalid'}${at}`
        violations.add({
          event_id: result?.first_invalid_event_id ?? null,
          agent_id: agent,
          sequence: result?.first_invalid_sequence ?? null,
          message: `The hash chain of agent "${agent}" does not verify: ${reason}.`,
        })
      }
    },
  }
}

/**
 * The latest timestamp must exist, verify, and be at most `max_age` old relative to `now`
 * (exactly `max_age` passes). A timestamp that is both invalid and stale gives two violations.
 */
export function checkTimestampFreshness(rule: TimestampFreshnessRule): RuleChecker {
  const violations = new ViolationList()
  const maxAgeMs = parseDuration(rule.max_age)
  const report = (message: string) => violations.add({event_id: null, agent_id: null, sequence: null, message})
  return {
    rule,
    violations,
    async finish(end: CheckEnd) {
      const latest = await end.latestTimestamp()
      if (latest === null) return report('No timestamp has been issued for the Merkle root.')
      if (!latest.valid)
        report(`The latest timestamp (${latest.timestamp}) does not verify: ${latest.error ?? 'no reason given'}.`)
      const age = end.now.getTime() - Date.parse(latest.timestamp)
      if (Number.isNaN(age)) report(`The latest timestamp has an unreadable time "${latest.timestamp}".`)
      else if (age > maxAgeMs) {
        report(
          `The latest timestamp (${latest.timestamp}) is ${formatDuration(age)} old, older than the maximum age ` +
            `of ${rule.max_age}.`,
        )
      }
    },
  }
}
