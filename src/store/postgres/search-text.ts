/**
 * GET /v1/search on PostgreSQL full-text search with the same semantics as the sql.js store
 * (src/store/search.ts): the same fields and texts, split into the same tokens (runs of letters,
 * digits and marks, case folded, diacritics removed, as SQLite's unicode61 does), every term a
 * phrase of its tokens, all terms required. The tokens are made here, not by a text search
 * configuration, so both stores agree; PostgreSQL gets a tsvector and a tsquery literal.
 *
 * Limits of tsvector: positions stop at 16,383 and a lexeme keeps 256 of them, so in an event's
 * text past those a word is still found but a phrase may not be. The text read per event is capped
 * at MAX_SEARCHED_CHARS, and the pairs of adjacent tokens at MAX_PAIR_UNITS, so that a tsvector stays
 * under PostgreSQL's 1 MB.
 */
import type {EventInput} from '../../core/types.js'
import {SEARCHED_FIELDS} from '../event-row.js'
import {fieldText, TOKEN} from '../search.js'

const MARKS = /\p{M}/gu
const ASCII = /^[\x00-\x7f]*$/
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
  // ASCII has no marks and is its own NFD: lower case is all that is left to do (most tokens).
  const folded = ASCII.test(token) ? token.toLowerCase() : token.normalize('NFD').replace(MARKS, '').toLowerCase()
  return folded.length > MAX_LEXEME_CODE_POINTS ? [...folded].slice(0, MAX_LEXEME_CODE_POINTS).join('') : folded
}

function tokens(text: string): string[] {
  return (text.match(TOKEN) ?? []).map(fold).filter((token) => token !== '')
}

/**
 * Lexemes of two adjacent tokens of one field, 'a b' (no token holds a space), so that the index
 * finds a phrase by its pairs: GIN keeps no positions, and without them a phrase of common words
 * (`customer-5`: every event has `customer`, a seventh has `5`) rechecks every row holding both.
 * A pair is left out where it could pass PostgreSQL's 2,047 bytes a lexeme (at most 3 bytes a UTF-16
 * unit), in documents and queries alike.
 */
function pairLexeme(a: string, b: string): string | undefined {
  return (a.length + 1 + b.length) * 3 <= 2046 ? `${a} ${b}` : undefined
}

/** Code units of pair lexemes one document holds; past it, PAIRS_INCOMPLETE stands for the rest. */
const MAX_PAIR_UNITS = 32 * 1024
/** The lexeme of a document whose pairs were not all kept: no token or pair can be `+`. */
const PAIRS_INCOMPLETE = '+'

/**
 * The tsvector literal of an event's searched fields, in SEARCHED_FIELDS' order (a change of it
 * needs a migration: migrations.ts, SEARCH_ORDER_VERSION); a gap between fields keeps phrases inside one.
 */
export function searchDocument(event: EventInput): string {
  const fields = SEARCHED_FIELDS.map((field) => fieldText(field, event[field.name as keyof EventInput]))
  const positions = new Map<string, number[]>()
  const pairs = new Set<string>()
  let pairUnits = 0
  let pairsIncomplete = false
  let position = 0
  let budget = MAX_SEARCHED_CHARS
  for (const field of fields) {
    if (field === null || budget <= 0) continue
    const text = field.length > budget ? field.slice(0, budget) : field
    budget -= text.length
    position++
    let previous: string | undefined
    for (const token of tokens(text)) {
      position = Math.min(position + 1, MAX_POSITION)
      const list = positions.get(token)
      if (list === undefined) positions.set(token, [position])
      else if (list.length < MAX_POSITIONS_PER_LEXEME && list[list.length - 1] !== position) list.push(position)
      const pair = previous === undefined ? undefined : pairLexeme(previous, token)
      previous = token
      if (pair === undefined || pairs.has(pair)) continue
      if (pairUnits + pair.length > MAX_PAIR_UNITS) pairsIncomplete = true
      else {
        pairs.add(pair)
        pairUnits += pair.length
      }
    }
  }
  if (pairsIncomplete) pairs.add(PAIRS_INCOMPLETE)
  // Tokens hold letters, digits and marks only, pairs a space more: nothing to escape inside the quotes.
  const lexemes = [...positions].map(([token, list]) => `'${token}':${list.join(',')}`)
  for (const pair of pairs) lexemes.push(`'${pair}'`)
  return lexemes.join(' ')
}

/**
 * The tsquery literal of search terms (each a word or a quoted phrase), or undefined when a term has
 * no token. A phrase also asks for its pairs (or a document that could not keep all of its own),
 * which the index answers; the phrase itself is then checked on those rows only.
 */
export function searchQuery(terms: readonly string[]): string | undefined {
  if (terms.length === 0) return undefined
  const parts: string[] = []
  for (const term of terms) {
    const words = tokens(term)
    if (words.length === 0) return undefined
    if (words.length === 1) {
      parts.push(`'${words[0]}'`)
      continue
    }
    parts.push(`(${words.map((w) => `'${w}'`).join(' <-> ')})`)
    const pairs = new Set<string>()
    for (let i = 1; i < words.length; i++) {
      const pair = pairLexeme(words[i - 1]!, words[i]!)
      if (pair !== undefined) pairs.add(`'${pair}'`)
    }
    if (pairs.size > 0) parts.push(`(${[...pairs].join(' & ')} | '${PAIRS_INCOMPLETE}')`)
  }
  return parts.join(' & ')
}
