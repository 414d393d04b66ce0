/**
 * A page of the events a condition matches, and how many it matches, in one statement
 * (docs/postgres.md, Reads). The matching indexes are collected once, by whatever plan suits the
 * condition, then counted, and only the page's rows are read, by primary key. Asked as `ORDER BY
 * "index" LIMIT n` beside a separate count, the planner walks the primary key and tests every row
 * until n match whenever it takes the condition for common: for a word in 0.01 % of a million
 * events, with or without statistics, that is the whole table, where the matches are a few pages.
 */
import {EVENT_JSON} from './schema.js'

/**
 * The statement for `where` (a WHERE clause over `events` with placeholders $1..$params); the page's
 * limit and offset are the next two. Its one row: `total` (bigint as text) and `rows` (EVENT_JSON
 * texts in index order, or null for an empty page).
 */
export function countedPageSql(where: string, params: number): string {
  return `WITH matches AS MATERIALIZED (SELECT "index" FROM events ${where}),
  page AS (SELECT "index" FROM matches ORDER BY "index" LIMIT $${params + 1} OFFSET $${params + 2})
  SELECT (SELECT count(*) FROM matches) AS total,
    (SELECT array_agg(found.row ORDER BY found."index") FROM (SELECT ${EVENT_JSON} AS row, "index" FROM events
      WHERE "index" IN (SELECT "index" FROM page)) AS found) AS rows`
}

export type CountedPageRow = {total: string; rows: string[] | null}
