/**
 * The sql.js store's WHERE clause for the filters of GET /v1/events (docs/api.md): all combined
 * with AND, `since` inclusive and `until` exclusive on `timestamp`, `label.<key>=<value>`,
 * `trace_id` and `session_id` exact.
 * Timestamps are stored as milliseconds since the epoch (schema.ts), so the bounds (normalised
 * `YYYY-MM-DDTHH:mm:ss.sssZ`) are compared as milliseconds too, through the timestamp index.
 */
import type {EventFilter} from '../../core/types.js'
import type {ScanOptions} from '../store.js'
import type {Param} from './database.js'
import {millis} from './schema.js'

export interface Where {
  /** `WHERE ...` or '' */
  sql: string
  params: Param[]
}

/** Conditions for a filter and an optional index range [fromIndex, toIndex). */
export function whereClause(filter: EventFilter = {}, range: Omit<ScanOptions, 'filter'> = {}): Where {
  const conditions: string[] = []
  const params: Param[] = []
  const add = (condition: string, ...values: Param[]) => {
    conditions.push(condition)
    params.push(...values)
  }
  if (filter.agent_id !== undefined) add('agent_id = ?', filter.agent_id)
  if (filter.action_type !== undefined) add('action_type = ?', filter.action_type)
  if (filter.trace_id !== undefined) add('trace_id = ?', filter.trace_id)
  if (filter.session_id !== undefined) add('session_id = ?', filter.session_id)
  if (filter.since !== undefined) add('timestamp >= ?', millis(filter.since) ?? filter.since)
  if (filter.until !== undefined) add('timestamp < ?', millis(filter.until) ?? filter.until)
  // The index range is repeated inside the label subquery: SQLite walks the subquery's rows in
  // event_index order, so without it every batch of a scan would start again from the first label.
  const within =
    `${range.fromIndex === undefined ? '' : ' AND event_index >= ?'}` +
    `${range.toIndex === undefined ? '' : ' AND event_index < ?'}`
  const bounds = [range.fromIndex, range.toIndex].filter((bound) => bound !== undefined)
  for (const [key, value] of Object.entries(filter.labels ?? {})) {
    const pair = '(SELECT id FROM label_pairs WHERE key = ? AND value = ?)'
    add(`"index" IN (SELECT event_index FROM label_index WHERE pair = ${pair}${within})`, key, value, ...bounds)
  }
  if (range.fromIndex !== undefined) add('"index" >= ?', range.fromIndex)
  if (range.toIndex !== undefined) add('"index" < ?', range.toIndex)
  return {sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params}
}
