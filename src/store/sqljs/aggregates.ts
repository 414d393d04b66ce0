/**
 * The sql.js tables of the aggregates for GET /v1/agents and GET /v1/stats (docs/api.md): two small
 * tables updated in the same transaction as every append (the rows: ../aggregates.ts), so that
 * answering costs O(agents) and not a scan of a million events. An agent is active when its latest
 * `recorded_at` is recent.
 *
 * Should the tables be empty while events exist (a file written by hand), they are rebuilt from
 * the events on open.
 */
import type {AgentHead, AgentSummary} from '../../core/types.js'
import {hashText, timeText} from './schema.js'

export const AGGREGATES_SCHEMA = `
CREATE TABLE IF NOT EXISTS agents (
  agent_id TEXT PRIMARY KEY,
  event_count INTEGER NOT NULL,
  first_activity TEXT NOT NULL,
  last_activity TEXT NOT NULL,
  last_sequence INTEGER NOT NULL,
  head_hash TEXT NOT NULL,
  last_recorded_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS action_counts (
  field TEXT NOT NULL,
  value TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (field, value)
) WITHOUT ROWID;
`

export const UPSERT_AGENT = `INSERT INTO agents (agent_id, event_count, first_activity, last_activity, last_sequence,
  head_hash, last_recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (agent_id) DO UPDATE SET
    event_count = event_count + excluded.event_count,
    first_activity = min(first_activity, excluded.first_activity),
    last_activity = max(last_activity, excluded.last_activity),
    head_hash = CASE WHEN excluded.last_sequence >= last_sequence THEN excluded.head_hash ELSE head_hash END,
    last_sequence = max(last_sequence, excluded.last_sequence),
    last_recorded_at = max(last_recorded_at, excluded.last_recorded_at)`

export const UPSERT_COUNT = `INSERT INTO action_counts (field, value, count) VALUES (?, ?, ?)
  ON CONFLICT (field, value) DO UPDATE SET count = count + excluded.count`

/** Recounts action_counts alone from `events` (also when its counts no longer add up: edited). */
export const RECOUNT_ACTIONS = `
DELETE FROM action_counts;
INSERT INTO action_counts SELECT 'action_type', action_type, count(*) FROM events GROUP BY action_type;
INSERT INTO action_counts SELECT 'action_status', action_status, count(*) FROM events GROUP BY action_status;
`

/** Rebuilds both tables from `events` (one scan; only for files without them). */
export const REBUILD_AGGREGATES = `
DELETE FROM agents;
INSERT INTO agents SELECT e.agent_id, g.n, ${timeText('g.first')}, ${timeText('g.last')}, e.sequence,
  ${hashText('e.hash')}, ${timeText('g.recorded')}
  FROM (SELECT agent_id, count(*) AS n, min(timestamp) AS first, max(timestamp) AS last, max(sequence) AS head,
    max(recorded_at) AS recorded FROM events GROUP BY agent_id) g
  JOIN events e ON e.agent_id = g.agent_id AND e.sequence = g.head;
${RECOUNT_ACTIONS}`

export const AGENTS_JSON = `SELECT json_array(agent_id, event_count, first_activity, last_activity, last_sequence,
  head_hash) FROM agents ORDER BY agent_id`
export const COUNTS_JSON = 'SELECT json_array(field, value, count) FROM action_counts ORDER BY field, value'

export function toSummary(rowJson: string): AgentSummary {
  const [agent_id, event_count, first_activity, last_activity, last_sequence, head_hash] = JSON.parse(rowJson) as [
    string,
    number,
    string,
    string,
    number,
    string,
  ]
  return {agent_id, event_count, first_activity, last_activity, last_sequence, head_hash}
}

export function toHead({agent_id, last_sequence, head_hash}: AgentSummary): AgentHead {
  return {agent_id, last_sequence, head_hash}
}

/** COUNTS_JSON rows as the by_action_type and by_action_status records of /v1/stats. */
export function toCounts(rows: readonly string[]): {
  by_action_type: Record<string, number>
  by_action_status: Record<string, number>
} {
  const result = {by_action_type: {} as Record<string, number>, by_action_status: {} as Record<string, number>}
  for (const text of rows) {
    const [field, value, count] = JSON.parse(text) as [string, string, number]
    if (field === 'action_type') result.by_action_type[value] = count
    else if (field === 'action_status') result.by_action_status[value] = count
  }
  return result
}
