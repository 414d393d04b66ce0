/**
 * The searched text of an event, the same for both stores' GET /v1/search (docs/api.md): the
 * searched fields of the event row (event-row.ts): the agent, the action's type, name and status,
 * label values, error, and the text of the JSON payload members: their member names and every
 * string, number and boolean (numbers as JSON writes them; null is no text). The texts inside one
 * JSON field are joined by a space in their stored order, so a phrase may span adjacent ones
 * (`{"order":"refund"}` matches "order refund").
 */
import type {Json} from '../core/types.js'
import type {RowField} from './event-row.js'

/**
 * The characters a token is made of: runs of Unicode letters, digits, marks and private use, as
 * SQLite's unicode61 tokenizer keeps them (sqlite.org/fts3.html, section 8). The PostgreSQL store
 * makes its words with it too, so that both stores find the same events.
 */
export const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu

/** The texts of a JSON value in the order of its JSON text: member names, strings, numbers, booleans. */
function collectTexts(value: Json, into: string[]): void {
  if (typeof value === 'string') into.push(value)
  else if (Array.isArray(value)) for (const item of value) collectTexts(item, into)
  else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      into.push(key)
      collectTexts(value[key]!, into)
    }
  } else if (value !== null) into.push(String(value))
}

/** The text FTS indexes for a JSON field: its texts joined by spaces, or null when it has none. */
export function indexedText(value: Json | undefined): string | null {
  if (value === undefined) return null
  if (typeof value === 'string') return value
  const texts: string[] = []
  collectTexts(value, texts)
  return texts.length === 0 ? null : texts.join(' ')
}

/** The text FTS indexes for label values (names are not searched: docs/api.md says values). */
export function labelValuesText(labels: Json): string | null {
  if (labels === null || typeof labels !== 'object' || Array.isArray(labels)) return indexedText(labels)
  const values = Object.values(labels).filter((value): value is string => typeof value === 'string')
  return values.length === 0 ? null : values.join(' ')
}

/**
 * The searched text of one field of SEARCHED_FIELDS (event-row.ts) given its decoded value (a JSON
 * column's text that is not JSON stays text): null when it has none.
 */
export function fieldText(field: RowField, value: unknown): string | null {
  if (value === undefined || value === null) return null
  if (field.kind !== 'json') return value as string
  return field.name === 'labels' ? labelValuesText(value as Json) : indexedText(value as Json)
}
