/**
 * The aggregates both stores keep with every append, for GET /v1/agents and GET /v1/stats
 * (docs/api.md): per agent its event count, first and last activity, head and latest `recorded_at`;
 * per action_type and action_status value a count. aggregateRows gives a batch's increments.
 */
import type {StoredEvent} from '../core/types.js'

/** An agent's increment: id, events, first and last timestamp, last sequence, its hash, latest recorded_at. */
export type AgentRow = [string, number, string, string, number, string, string]
/** A count's increment: field (action_type or action_status), value, events. */
export type CountRow = [string, string, number]

/** The increments of a batch of events in index order (the parameters of the stores' upserts). */
export function aggregateRows(events: readonly StoredEvent[]): {agents: AgentRow[]; counts: CountRow[]} {
  const agents = new Map<string, AgentRow>()
  const counts = {action_type: new Map<string, number>(), action_status: new Map<string, number>()}
  for (const e of events) {
    const row = agents.get(e.agent_id)
    if (!row) {
      agents.set(e.agent_id, [e.agent_id, 1, e.timestamp, e.timestamp, e.sequence, e.hash, e.recorded_at])
    } else {
      row[1]++
      if (e.timestamp < row[2]) row[2] = e.timestamp
      if (e.timestamp > row[3]) row[3] = e.timestamp
      if (e.sequence >= row[4]) [row[4], row[5]] = [e.sequence, e.hash]
      if (e.recorded_at > row[6]) row[6] = e.recorded_at
    }
    counts.action_type.set(e.action_type, (counts.action_type.get(e.action_type) ?? 0) + 1)
    counts.action_status.set(e.action_status, (counts.action_status.get(e.action_status) ?? 0) + 1)
  }
  return {
    agents: [...agents.values()],
    counts: Object.entries(counts).flatMap(([field, values]) =>
      [...values].map(([value, count]): CountRow => [field, value, count]),
    ),
  }
}
