/**
 * The sql.js store's WHERE clause for the filters of GET /v1/events, rendered from the conditions
 * both stores read a filter as (filters.ts). Timestamps are stored as milliseconds since the epoch
 * (schema.ts), so the bounds (normalised `YYYY-MM-DDTHH:mm:ss.sssZ`) are compared as milliseconds
 * too, through the timestamp index.
 */
import type {EventFilter} from '../../core/types.js'
import {sqlName} from '../event-row.js'
import {agentPatternParts, conditionsOf} from '../filters.js'
import type {ScanOptions} from '../store.js'
import type {Param} from './database.js'
import {millis} from './schema.js'

export interface Where {
  /** `WHERE ...` or '' */
  sql: string
  params: Param[]
}

/** The filter's conditions (filters.ts) and an optional index range [fromIndex, toIndex) in SQLite. */
export function whereClause(filter: EventFilter = {}, range: Omit<ScanOptions, 'filter'> = {}): Where {
  const conditions: string[] = []
  const params: Param[] = []
  const add = (condition: string, ...values: Param[]) => {
    conditions.push(condition)
    params.push(...values)
  }
  // The index range is repeated inside the label subquery: SQLite walks the subquery's rows in
  // event_index order, so without it every batch of a scan would start again from the first label.
  const within =
    `${range.fromIndex === undefined ? '' : ' AND event_index >= ?'}` +
    `${range.toIndex === undefined ? '' : ' AND event_index < ?'}`
  const bounds = [range.fromIndex, range.toIndex].filter((bound) => bound !== undefined)
  const pair = '(SELECT id FROM label_pairs WHERE key = ? AND value = ?)'
  for (const condition of conditionsOf(filter, range)) {
    if (condition.kind === 'exact') add(`${sqlName(condition.member)} = ?`, condition.value)
    else if (condition.kind === 'since') add('"timestamp" >= ?', millis(condition.value) ?? condition.value)
    else if (condition.kind === 'until') add('"timestamp" < ?', millis(condition.value) ?? condition.value)
    else if (condition.kind === 'label')
      add(
        `"index" IN (SELECT event_index FROM label_index WHERE pair = ${pair}${within})`,
        condition.key,
        condition.value,
        ...bounds,
      )
    else if (condition.kind === 'agents') {
      const tests = condition.patterns.map(agentTest)
      add(`(${tests.map(([sql]) => sql).join(' OR ')})`, ...tests.map(([, value]) => value))
    } else add(condition.kind === 'from' ? '"index" >= ?' : '"index" < ?', condition.value)
  }
  return {sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params}
}

/**
 * One agent pattern of a bound key (filters.ts) in SQLite: equality without `*`, else GLOB, which is
 * case-sensitive like the pattern; the GLOB wildcards `?` and `[` of the literal runs are put in
 * brackets, where they stand for themselves (sqlite.org/lang_expr.html#glob).
 */
function agentTest(pattern: string): [string, string] {
  const parts = agentPatternParts(pattern)
  if (parts.length === 1) return ['agent_id = ?', pattern]
  return ['agent_id GLOB ?', parts.map((part) => part.replace(/[[?]/g, '[$&]')).join('*')]
}
