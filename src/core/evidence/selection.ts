/** The selection an evidence package or an erasure names (the filters of GET /v1/events, docs/api.md). */
import {agentMatcher} from '../trail/name.js'
import type {EventFilter, StoredEvent} from '../types.js'

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Whether an event is inside the selection (the rules of GET /v1/events: since inclusive, until exclusive). */
export function inSelection(event: StoredEvent, filters: EventFilter): boolean {
  const time = Date.parse(event.timestamp)
  return (
    (filters.agent_id === undefined || event.agent_id === filters.agent_id) &&
    (filters.agents === undefined || matcherOf(filters.agents)(event.agent_id)) &&
    (filters.action_type === undefined || event.action_type === filters.action_type) &&
    (filters.trace_id === undefined || event.trace_id === filters.trace_id) &&
    (filters.session_id === undefined || event.session_id === filters.session_id) &&
    (filters.since === undefined || time >= Date.parse(filters.since)) &&
    (filters.until === undefined || time < Date.parse(filters.until)) &&
    Object.entries(filters.labels ?? {}).every(
      ([key, value]) => isPlainObject(event.labels) && Object.hasOwn(event.labels, key) && event.labels[key] === value,
    )
  )
}

/** Each pattern list compiled once, however many events are checked against it. */
const matchers = new WeakMap<readonly string[], (agentId: string) => boolean>()

function matcherOf(patterns: readonly string[]): (agentId: string) => boolean {
  let matcher = matchers.get(patterns)
  if (matcher === undefined) matchers.set(patterns, (matcher = agentMatcher(patterns)))
  return matcher
}
