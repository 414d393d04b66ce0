/**
 * The reads that answer at once (docs/postgres.md, Reads): events by id, pages of a filter or a
 * search with their totals, and the aggregates `agents`, `action_counts` and `log_state` keep.
 */
import type {AgentHead, AgentSummary, EventFilter, Page, PageResult, StoreStats, StoredEvent} from '../../core/types.js'
import {toEvent} from '../event-row.js'
import {aggregateCounted} from '../filters.js'
import type {SearchQuery} from '../../core/search/index.js'
import {countedPageSql, type CountedPageRow} from './counted-page.js'
import type {Query} from './database.js'
import {EVENT_JSON} from './schema.js'
import {searchQuery} from './search-text.js'
import {whereOf} from './where.js'

/**
 * The rows of the events with the ids of the text[] parameter `$n`, one index lookup per id: a
 * filter `id = ANY(...)` is planned as a scan of the whole table whenever the planner takes `events`
 * for smaller than it is (no statistics yet on a young table), and the lookup of each id is never
 * (docs/postgres.md, Plans).
 */
export const EVENT_ROWS_BY_ID = (n: number) => `SELECT found.row FROM unnest($${n}::text[]) AS wanted(wanted_id),
  LATERAL (SELECT ${EVENT_JSON} AS row FROM events WHERE id = wanted.wanted_id LIMIT 1) AS found`

/** The number of events (the next index), from `log_state`. */
export async function count(query: Query): Promise<number> {
  const [row] = await query<{size: string}>('SELECT size FROM log_state')
  return Number(row!.size)
}

/** The number of events a WHERE clause of whereOf matches, counted row by row. */
export async function countWhere(query: Query, where: {sql: string; params: unknown[]}): Promise<number> {
  const [row] = await query<{n: string}>(`SELECT count(*) AS n FROM events ${where.sql}`, where.params)
  return Number(row!.n)
}

export async function getEvent(query: Query, id: string): Promise<StoredEvent | undefined> {
  const [row] = await query<{row: string}>(`SELECT ${EVENT_JSON} AS row FROM events WHERE id = $1`, [id])
  return row === undefined ? undefined : toEvent(row.row)
}

export async function getEvents(query: Query, ids: string[]): Promise<Map<string, StoredEvent>> {
  const found = new Map<string, StoredEvent>()
  if (ids.length === 0) return found
  for (const {row} of await query<{row: string}>(EVENT_ROWS_BY_ID(1), [ids])) {
    const event = toEvent(row)
    found.set(event.id, event)
  }
  return found
}

export async function queryEvents(query: Query, filter: EventFilter, page: Page): Promise<PageResult<StoredEvent>> {
  const where = whereOf(filter)
  // A total that only counting the matches gives: then the page comes with it (counted-page.ts).
  if (where.params.length > 0 && aggregateCounted(filter) === undefined)
    return countedPage(query, where.sql, where.params, page)
  const n = where.params.length
  // The page and its total on two pooled connections at once.
  const [rows, total] = await Promise.all([
    query<{row: string}>(
      `SELECT ${EVENT_JSON} AS row FROM events ${where.sql} ORDER BY "index" LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...where.params, page.limit, page.offset],
    ),
    countEvents(query, filter),
  ])
  return {total, items: rows.map((r) => toEvent(r.row))}
}

/** As the sql.js store counts (filters.ts, aggregateCounted): one agent or one action type from its aggregate. */
export async function countEvents(query: Query, filter: EventFilter): Promise<number> {
  const where = whereOf(filter)
  if (where.params.length === 0) return count(query)
  const counted = aggregateCounted(filter)
  if (counted === undefined) return countWhere(query, where)
  const [row] =
    'agent_id' in counted
      ? await query<{n: string}>('SELECT coalesce((SELECT event_count FROM agents WHERE agent_id = $1), 0) AS n', [
          counted.agent_id,
        ])
      : await query<{n: string}>(
          "SELECT coalesce((SELECT count FROM action_counts WHERE field = 'action_type' AND value = $1), 0) AS n",
          [counted.action_type],
        )
  return Number(row!.n)
}

export async function searchEvents(
  query: Query,
  search: SearchQuery,
  page: Page,
  within: Pick<EventFilter, 'agents'> = {},
): Promise<PageResult<StoredEvent>> {
  const tsquery = searchQuery(search.terms)
  if (tsquery === undefined) return {total: 0, items: []}
  const scope = whereOf(within, {}, 2)
  const and = scope.sql === '' ? '' : ` AND ${scope.sql.slice('WHERE '.length)}`
  return countedPage(query, `WHERE search @@ $1::tsquery${and}`, [tsquery, ...scope.params], page)
}

/** The page and total of a condition in one statement (counted-page.ts). */
async function countedPage(
  query: Query,
  where: string,
  params: unknown[],
  page: Page,
): Promise<PageResult<StoredEvent>> {
  const [row] = await query<CountedPageRow>(countedPageSql(where, params.length), [...params, page.limit, page.offset])
  return {total: Number(row!.total), items: (row!.rows ?? []).map(toEvent)}
}

export async function chainHeads(query: Query): Promise<{heads: AgentHead[]; size: number}> {
  // One statement, one snapshot: heads and size from the same committed state.
  const [row] = await query<{
    size: string
    heads: AgentHead[] | null
  }>(`SELECT (SELECT size FROM log_state) AS size,
    (SELECT json_agg(json_build_object('agent_id', agent_id, 'last_sequence', last_sequence,
     'head_hash', head_hash) ORDER BY agent_id)
     FROM agents) AS heads`)
  return {heads: row!.heads ?? [], size: Number(row!.size)}
}

export async function agentSummaries(query: Query): Promise<AgentSummary[]> {
  const rows = await query<{
    summary: AgentSummary
  }>(`SELECT json_build_object('agent_id', agent_id, 'event_count', event_count,
    'first_activity', first_activity, 'last_activity', last_activity,
    'last_sequence', last_sequence, 'head_hash', head_hash) AS summary
    FROM agents ORDER BY agent_id`)
  return rows.map((r) => r.summary)
}

export async function stats(query: Query, recentSince: string): Promise<StoreStats> {
  const [row] = await query<{
    stats: Omit<StoreStats, 'by_action_type' | 'by_action_status'>
    counts: [string, string, number][] | null
  }>(
    `SELECT json_build_object(
       'total_events', (SELECT size FROM log_state),
       'events_last_24h', (SELECT count(*) FROM events WHERE recorded_at >= $1),
       'active_agents', (SELECT count(*) FROM agents WHERE last_recorded_at >= $1),
       'total_agents', (SELECT count(*) FROM agents)) AS stats,
     (SELECT json_agg(json_build_array(field, value, count) ORDER BY field, value) FROM action_counts) AS counts`,
    [recentSince],
  )
  const byActionType: Record<string, number> = {}
  const byActionStatus: Record<string, number> = {}
  for (const [field, value, n] of row!.counts ?? [])
    (field === 'action_type' ? byActionType : byActionStatus)[value] = n
  return {...row!.stats, by_action_type: byActionType, by_action_status: byActionStatus}
}
