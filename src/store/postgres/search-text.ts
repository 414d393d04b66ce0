/**
 * GET /v1/search on PostgreSQL full-text search with the same semantics as the sql.js store
 * (src/store/search.ts): the same fields and texts, split into the same tokens (runs of letters,
 * digits and marks, case folded, diacritics removed, as SQLite's unicode61 does), every term a
 * phrase of its tokens, all terms required. The tokens are made here, not by a text search
 * configuration, so both stores agree; PostgreSQL gets a tsvector and a tsquery literal.
 *
 * Limits of tsvector: positions stop at 16,383 and a lexeme keeps 256 of them, so in an event's
 * text past those a word is still found but a phrase may not be. The text read per event is capped
 * at MAX_SEARCHED_CHARS so that a tsvector stays under PostgreSQL's 1 MB.
 */
import type {StoredEvent} from '../../core/types.js'
import {indexedText, labelValuesText} from '../search.js'

const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu
const MARKS = /\p{M}/gu
const MAX_POSITION = 16_383
const MAX_POSITIONS_PER_LEXEME = 256
export const MAX_SEARCHED_CHARS = 256 * 1024

/** Code points a lexeme keeps: at most 4 bytes each, within PostgreSQL's 2,047 bytes a lexeme. */
const MAX_LEXEME_CODE_POINTS = 500

/**
 * A token as unicode61 folds it: lower case, without diacritics; '' when nothing is left. A longer
 * token than a lexeme holds keeps its first 500 code points, in the document and the query alike.
 */
function fold(token: string): string {
  const folded = token.normalize('NFD').replace(MARKS, '').toLowerCase()
  return folded.length > MAX_LEXEME_CODE_POINTS ? [...folded].slice(0, MAX_LEXEME_CODE_POINTS).join('') : folded
}

function tokens(text: string): string[] {
  return (text.match(TOKEN) ?? []).map(fold).filter((token) => token !== '')
}

/** The tsvector literal of an event's searched fields; a gap between fields keeps phrases inside one. */
export function searchDocument(event: StoredEvent): string {
  const fields = [
    event.agent_id,
    event.action_type,
    event.action_name,
    event.action_status,
    labelValuesText(event.labels),
    event.error ?? null,
    indexedText(event.input),
    indexedText(event.output),
    indexedText(event.metadata),
  ]
  const positions = new Map<string, number[]>()
  let position = 0
  let budget = MAX_SEARCHED_CHARS
  for (const field of fields) {
    if (field === null || budget <= 0) continue
    const text = field.length > budget ? field.slice(0, budget) : field
    budget -= text.length
    position++
    for (const token of tokens(text)) {
      position = Math.min(position + 1, MAX_POSITION)
      const list = positions.get(token)
      if (list === undefined) positions.set(token, [position])
      else if (list.length < MAX_POSITIONS_PER_LEXEME && list[list.length - 1] !== position) list.push(position)
    }
  }
  // Tokens hold letters, digits and marks only: nothing to escape inside the quotes.
  return [...positions].map(([token, list]) => `'${token}':${list.join(',')}`).join(' ')
}

/** The tsquery literal of search terms (each a word or a quoted phrase), or undefined when a term has no token. */
export function searchQuery(terms: readonly string[]): string | undefined {
  if (terms.length === 0) return undefined
  const phrases: string[] = []
  for (const term of terms) {
    const words = tokens(term)
    if (words.length === 0) return undefined
    phrases.push(words.length === 1 ? `'${words[0]}'` : `(${words.map((w) => `'${w}'`).join(' <-> ')})`)
  }
  return phrases.join(' & ')
}
