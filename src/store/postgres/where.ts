/**
 * The WHERE clause of GET /v1/events' filter (docs/api.md) and an index range over `events`, in
 * PostgreSQL's placeholders: what queries, scans and erasure selections read.
 */
import type {EventFilter} from '../../core/types.js'
import type {ScanOptions} from '../store.js'

/** The WHERE clause of a filter and index range, with PostgreSQL placeholders from $first on. */
export function whereOf(
  filter: EventFilter = {},
  range: Omit<ScanOptions, 'filter'> = {},
  first = 1,
): {sql: string; params: unknown[]} {
  const conditions: string[] = []
  const params: unknown[] = []
  const add = (condition: string, value: unknown) => {
    params.push(value)
    conditions.push(condition.replace('?', `$${first + params.length - 1}`))
  }
  if (filter.agent_id !== undefined) add('agent_id = ?', filter.agent_id)
  if (filter.action_type !== undefined) add('action_type = ?', filter.action_type)
  if (filter.since !== undefined) add('"timestamp" >= ?', filter.since)
  if (filter.until !== undefined) add('"timestamp" < ?', filter.until)
  if (filter.labels !== undefined && Object.keys(filter.labels).length > 0)
    add('labels @> ?::jsonb', JSON.stringify(filter.labels))
  if (filter.trace_id !== undefined) add('trace_id = ?', filter.trace_id)
  if (filter.session_id !== undefined) add('session_id = ?', filter.session_id)
  if (range.fromIndex !== undefined) add('"index" >= ?', range.fromIndex)
  if (range.toIndex !== undefined) add('"index" < ?', range.toIndex)
  return {sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params}
}
