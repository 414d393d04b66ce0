/**
 * The WHERE clause of GET /v1/events' filter and an index range over `events`, rendered from the
 * conditions both stores read a filter as (filters.ts), in PostgreSQL's placeholders: what queries,
 * scans and erasure selections read. The labels are one containment test on the jsonb column,
 * which its GIN index answers.
 */
import type {EventFilter} from '../../core/types.js'
import {sqlName} from '../event-row.js'
import {agentPatternParts, conditionsOf} from '../filters.js'
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
  const labels: [string, string][] = []
  for (const condition of conditionsOf(filter, range)) {
    if (condition.kind === 'exact') add(`${sqlName(condition.member)} = ?`, condition.value)
    else if (condition.kind === 'since') add('"timestamp" >= ?', condition.value)
    else if (condition.kind === 'until') add('"timestamp" < ?', condition.value)
    else if (condition.kind === 'label') labels.push([condition.key, condition.value])
    else if (condition.kind === 'agents') {
      const tests = condition.patterns.map((pattern) => {
        const [sql, value] = agentTest(pattern)
        params.push(value)
        return sql.replace('?', `$${first + params.length - 1}`)
      })
      conditions.push(`(${tests.join(' OR ')})`)
    } else add(condition.kind === 'from' ? '"index" >= ?' : '"index" < ?', condition.value)
  }
  // fromEntries defines each key as an own member, `__proto__` included.
  if (labels.length > 0) add('labels @> ?::jsonb', JSON.stringify(Object.fromEntries(labels)))
  return {sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params}
}

/**
 * One agent pattern of a bound key (filters.ts) in PostgreSQL: equality without `*`, else LIKE,
 * case-sensitive like the pattern, with `%`, `_` and the escape character of the literal runs
 * escaped (postgresql.org/docs/current/functions-matching.html#FUNCTIONS-LIKE).
 */
function agentTest(pattern: string): [string, string] {
  const parts = agentPatternParts(pattern)
  if (parts.length === 1) return ['agent_id = ?', pattern]
  return ["agent_id LIKE ? ESCAPE '\\'", parts.map((part) => part.replace(/[\\%_]/g, '\\$&')).join('%')]
}
