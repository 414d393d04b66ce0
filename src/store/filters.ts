/**
 * The filters of GET /v1/events (docs/api.md) and a scan's index range as one list of conditions,
 * all combined with AND, which each store renders in its SQL: `since` inclusive and `until`
 * exclusive on `timestamp`, `label.<key>=<value>` and the text members exact.
 */
import {FILTER_MEMBERS} from '../core/query-params.js'
import type {EventFilter} from '../core/types.js'
import type {ScanOptions} from './store.js'

/** The members of a filter compared whole with the column of the same name. */
export type ExactMember = {
  [K in keyof typeof FILTER_MEMBERS]: (typeof FILTER_MEMBERS)[K] extends 'text' ? K : never
}[keyof typeof FILTER_MEMBERS]

export type Condition =
  | {kind: 'exact'; member: ExactMember; value: string}
  /** `timestamp >= value` (since) or `timestamp < value` (until), as times. */
  | {kind: 'since' | 'until'; value: string}
  | {kind: 'label'; key: string; value: string}
  /** `agent_id` matching one of the patterns of a key bound to agents (agentPatternParts). */
  | {kind: 'agents'; patterns: readonly string[]}
  /** `index >= value` (from) or `index < value` (to). */
  | {kind: 'from' | 'to'; value: number}

/** A filter and an index range [fromIndex, toIndex) as conditions, in FILTER_MEMBERS' order, the range last. */
export function conditionsOf(filter: EventFilter = {}, range: Omit<ScanOptions, 'filter'> = {}): Condition[] {
  const conditions: Condition[] = []
  for (const [member, kind] of Object.entries(FILTER_MEMBERS) as [keyof EventFilter, string][]) {
    const value = filter[member]
    if (value === undefined) continue
    if (kind === 'text') conditions.push({kind: 'exact', member: member as ExactMember, value: value as string})
    else if (kind === 'time') conditions.push({kind: member as 'since' | 'until', value: value as string})
    else if (kind === 'patterns') conditions.push({kind: 'agents', patterns: value as readonly string[]})
    else
      for (const [key, labelValue] of Object.entries(value as Record<string, string>))
        conditions.push({kind: 'label', key, value: labelValue})
  }
  if (range.fromIndex !== undefined) conditions.push({kind: 'from', value: range.fromIndex})
  if (range.toIndex !== undefined) conditions.push({kind: 'to', value: range.toIndex})
  return conditions
}

/** True when the filter restricts nothing (then the total is the row count). */
export function isEmptyFilter(filter: EventFilter): boolean {
  return conditionsOf(filter).length === 0
}

/**
 * The aggregate that counts a filter's events without reading them: a filter on one agent alone is
 * that agent's event_count (table `agents`), on one action type alone its row of `action_counts`.
 * Both are kept in the transaction of every append, so they are the same numbers as /v1/agents and
 * /v1/stats.
 */
export function aggregateCounted(filter: EventFilter): {agent_id: string} | {action_type: string} | undefined {
  const [only, ...others] = conditionsOf(filter)
  if (only?.kind !== 'exact' || others.length > 0) return undefined
  if (only.member === 'agent_id') return {agent_id: only.value}
  if (only.member === 'action_type') return {action_type: only.value}
  return undefined
}

/**
 * A key's agent pattern as the runs of literal text between its `*`s: each store renders the runs
 * escaped for its own matching (GLOB, LIKE), so that no other character of an agent id is a
 * wildcard. A pattern without `*` is one run, compared whole.
 */
export function agentPatternParts(pattern: string): string[] {
  return pattern.split('*')
}
