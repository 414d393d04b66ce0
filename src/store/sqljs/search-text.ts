/**
 * Text search of GET /v1/search (docs/api.md) on SQLite FTS4 with the unicode61
 * tokenizer (sql.js has no FTS5). unicode61 splits text into runs of letters and digits, folds
 * case and removes diacritics, so `Read_File` is indexed as the tokens `read` and `file`.
 *
 * Decisions:
 * - Searched text: ../search.ts. Each field is its own FTS column, so a phrase never spans two
 *   fields.
 * - A query term becomes an FTS phrase of its tokens: `read_file` matches `read_file` (and
 *   `read-file`, `READ FILE`), never `readfile`; every term must match (FTS implicit AND).
 * - A term with no letter or digit (`!!`, `_`) can never match indexed text, so such a query
 *   matches nothing (no slow LIKE scan).
 */
import {parseJsonColumn, SEARCHED_FIELDS, sqlName} from '../event-row.js'
import {fieldText, TOKEN} from '../search.js'

/**
 * The version of what textRow feeds the index; search.sqlite files of another version are made
 * anew from the events. 2: member names, numbers and booleans of JSON fields are searched too.
 * 3: the index can forget an event's erased text (SEARCH_SCHEMA).
 */
export const SEARCH_TEXT_FORMAT = '3'

/**
 * The FTS4 MATCH expression for lower-cased search terms, or undefined when some term has no token
 * (then nothing can match). Only token characters go inside the quotes, so no FTS syntax (`*`
 * prefixes, `"`, operators) can come from the user.
 */
export function matchExpression(terms: readonly string[]): string | undefined {
  if (terms.length === 0) return undefined
  const phrases: string[] = []
  for (const term of terms) {
    const tokens = term.match(TOKEN)
    if (!tokens) return undefined
    phrases.push(`"${tokens.join(' ')}"`)
  }
  return phrases.join(' ')
}

/**
 * The search index, a database of its own (`search.sqlite`, kept by search-database.ts in a
 * worker thread). `events_fts` is an FTS4 index whose docid is the event's index: it keeps no copy
 * of the text, and `matchinfo=fts3` drops the per-document size table that only ranking would read.
 * Its "external content" table `erasing` is empty but while an erasure deletes events' old text:
 * FTS4 reads the text to delete from there (sqlite.org/fts3.html section 6.2.2), which a
 * contentless index (`content=''`) cannot do at all. Queries read only the index.
 */
/** The index's text columns: the searched fields of EVENT_ROW, each a column of its own. */
const TEXT_COLUMNS = SEARCHED_FIELDS.map((field) => field.name).join(', ')
const TEXT_VALUES = Array(SEARCHED_FIELDS.length + 1)
  .fill('?')
  .join(', ')

export const SEARCH_SCHEMA = `
CREATE TABLE IF NOT EXISTS erasing (docid INTEGER PRIMARY KEY, ${TEXT_COLUMNS});
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts4(
  ${TEXT_COLUMNS},
  content='erasing', matchinfo=fts3, tokenize=unicode61
);
CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`

export const INSERT_TEXT = `INSERT INTO events_fts (docid, ${TEXT_COLUMNS}) VALUES (${TEXT_VALUES})`
/** The old text of events being erased, for FTS4 to delete (see SEARCH_SCHEMA). */
export const INSERT_ERASING = `INSERT INTO erasing (docid, ${TEXT_COLUMNS}) VALUES (${TEXT_VALUES})`

/**
 * What the index needs of an event, as stored: its index, then the searched fields (SEARCHED_FIELDS'
 * order; labels and the JSON members as JSON text, absent members null).
 */
export type SearchSource = [number, ...(string | null)[]]

/** The same fields read back from the events table, as one JSON array text per row. */
const SEARCHED_COLUMNS = SEARCHED_FIELDS.map((field) => sqlName(field.name)).join(', ')
export const SEARCH_SOURCE_JSON = `json_array("index", ${SEARCHED_COLUMNS})`

/** The parameters of INSERT_TEXT: the searched fields of docs/api.md (GET /v1/search). */
export function textRow(source: SearchSource): (string | number | null)[] {
  const row: (string | number | null)[] = [source[0]]
  for (let i = 0; i < SEARCHED_FIELDS.length; i++) {
    const field = SEARCHED_FIELDS[i]!
    const text = source[i + 1] as string | null
    // A JSON column's text that is not JSON (a hand-edited file) is indexed as it is.
    row.push(field.kind === 'json' ? fieldText(field, parseJsonColumn(text)) : text)
  }
  return row
}
