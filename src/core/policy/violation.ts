/**
 * Violations and rule results of the POST /v1/policy/check response (docs/api.md,
 * Policy): at most 100 violations listed per rule, `violation_count` exact.
 */
import type {EventHeader} from '../types.js'
import type {Rule} from './rule.js'

export const MAX_LISTED_VIOLATIONS = 100

export interface Violation {
  event_id: string | null
  agent_id: string | null
  sequence: number | null
  message: string
}

export interface RuleResult {
  name: string
  type: string
  passed: boolean
  violation_count: number
  violations: Violation[]
}

/** Counts every violation but keeps only the first 100, so a million failures stay cheap. */
export class ViolationList {
  count = 0
  readonly listed: Violation[] = []

  /** Records a violation of one event; the message is built only when it will be listed. */
  addEvent(event: EventHeader, message: () => string): void {
    this.count++
    if (this.listed.length < MAX_LISTED_VIOLATIONS) {
      this.listed.push({event_id: event.id, agent_id: event.agent_id, sequence: event.sequence, message: message()})
    }
  }

  add(violation: Violation): void {
    this.count++
    if (this.listed.length < MAX_LISTED_VIOLATIONS) this.listed.push(violation)
  }

  resultFor(rule: Rule): RuleResult {
    return {
      name: rule.name,
      type: rule.type,
      passed: this.count === 0,
      violation_count: this.count,
      violations: this.listed,
    }
  }
}

/** `DATA_ACCESS pii.customers`: how messages name the action of an event. */
export function describeEvent(event: EventHeader): string {
  return `${event.action_type} ${event.action_name}`
}
