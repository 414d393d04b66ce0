/**
 * What the filters of GET /v1/events (docs/api.md) mean to both stores before any SQL: whether a
 * filter restricts anything, and whether an aggregate table counts its events.
 */
import type {EventFilter} from '../core/types.js'

/** True when the filter restricts nothing (then the total is the row count). */
export function isEmptyFilter(filter: EventFilter): boolean {
  return (
    filter.agent_id === undefined &&
    filter.action_type === undefined &&
    filter.trace_id === undefined &&
    filter.session_id === undefined &&
    filter.since === undefined &&
    filter.until === undefined &&
    Object.keys(filter.labels ?? {}).length === 0
  )
}

/**
 * The aggregate that counts a filter's events without reading them: a filter on one agent alone is
 * that agent's event_count (table `agents`), on one action type alone its row of `action_counts`.
 * Both are kept in the transaction of every append, so they are the same numbers as /v1/agents and
 * /v1/stats.
 */
export function aggregateCounted(filter: EventFilter): {agent_id: string} | {action_type: string} | undefined {
  const restricted = Object.entries(filter).filter(
    ([key, value]) => value !== undefined && !(key === 'labels' && Object.keys(value as object).length === 0),
  )
  if (restricted.length !== 1) return undefined
  if (filter.agent_id !== undefined) return {agent_id: filter.agent_id}
  if (filter.action_type !== undefined) return {action_type: filter.action_type}
  return undefined
}
