/**
 * Running aggregates for GET /v1/agents and GET /v1/stats (CONTRACT.md section 4): per agent its
 * event count, first and last activity (min and max `timestamp`), head sequence and hash, and the
 * counts by action_type and action_status. Computed once from the table with one GROUP BY scan,
 * then kept up to date by every append, so a dashboard polling them costs nothing per request.
 */
import type {AgentHead, AgentSummary, StoredEvent} from '../core/types.js'

/** One row of TALLY_QUERY: [agent_id, action_type, action_status, count, min(timestamp), max(timestamp)]. */
export type TallyRow = [string, string, string, number, string, string]

export const TALLY_QUERY = `SELECT json_array(agent_id, action_type, action_status, count(*), min(timestamp),
  max(timestamp)) FROM events GROUP BY agent_id, action_type, action_status`

/** Each agent's head: the event with its highest sequence. Uses the UNIQUE (agent_id, sequence) index. */
export const HEADS_QUERY = `SELECT json_array(e.agent_id, e.sequence, e.hash) FROM events e
  JOIN (SELECT agent_id, max(sequence) AS head FROM events GROUP BY agent_id) h
  ON e.agent_id = h.agent_id AND e.sequence = h.head`

const byAgentId = (a: {agent_id: string}, b: {agent_id: string}) => (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0)

/** Heads as AgentHead objects, ordered by agent_id. */
export function toHeads(rows: readonly string[]): AgentHead[] {
  return rows
    .map((text) => {
      const [agent_id, last_sequence, head_hash] = JSON.parse(text) as [string, number, string]
      return {agent_id, last_sequence, head_hash}
    })
    .sort(byAgentId)
}

function increment(counts: Map<string, number>, key: string, by: number): void {
  counts.set(key, (counts.get(key) ?? 0) + by)
}

function sortedRecord(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

export class Tally {
  readonly #agents = new Map<string, AgentSummary>()
  readonly #byType = new Map<string, number>()
  readonly #byStatus = new Map<string, number>()

  /** Builds the tally from TALLY_QUERY and HEADS_QUERY rows. */
  static fromRows(rows: readonly string[], heads: readonly AgentHead[]): Tally {
    const tally = new Tally()
    for (const text of rows) {
      const [agentId, type, status, count, first, last] = JSON.parse(text) as TallyRow
      increment(tally.#byType, type, count)
      increment(tally.#byStatus, status, count)
      const agent = tally.#agent(agentId, first)
      agent.event_count += count
      if (first < agent.first_activity) agent.first_activity = first
      if (last > agent.last_activity) agent.last_activity = last
    }
    for (const head of heads) {
      const agent = tally.#agents.get(head.agent_id)
      if (agent) Object.assign(agent, {last_sequence: head.last_sequence, head_hash: head.head_hash})
    }
    return tally
  }

  #agent(agentId: string, timestamp: string): AgentSummary {
    let agent = this.#agents.get(agentId)
    if (!agent) {
      agent = {agent_id: agentId, event_count: 0, first_activity: timestamp, last_activity: timestamp, last_sequence: 0, head_hash: ''}
      this.#agents.set(agentId, agent)
    }
    return agent
  }

  /** Counts an appended event (events arrive in index order, so it is its agent's new head). */
  add(event: StoredEvent): void {
    increment(this.#byType, event.action_type, 1)
    increment(this.#byStatus, event.action_status, 1)
    const agent = this.#agent(event.agent_id, event.timestamp)
    agent.event_count++
    if (event.timestamp < agent.first_activity) agent.first_activity = event.timestamp
    if (event.timestamp > agent.last_activity) agent.last_activity = event.timestamp
    if (event.sequence >= agent.last_sequence) {
      agent.last_sequence = event.sequence
      agent.head_hash = event.hash
    }
  }

  summaries(): AgentSummary[] {
    return [...this.#agents.values()].map((agent) => ({...agent})).sort(byAgentId)
  }

  heads(): AgentHead[] {
    return this.summaries().map(({agent_id, last_sequence, head_hash}) => ({agent_id, last_sequence, head_hash}))
  }

  get agentCount(): number {
    return this.#agents.size
  }

  byActionType(): Record<string, number> {
    return sortedRecord(this.#byType)
  }

  byActionStatus(): Record<string, number> {
    return sortedRecord(this.#byStatus)
  }
}
