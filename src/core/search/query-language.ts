/**
 * The query language of GET /v1/search (docs/api.md): whitespace-separated terms that
 * must all match, and `"quoted phrases"` that match as a whole. Matching is case-insensitive, so
 * terms are lower-cased here once.
 *
 * Decisions of docs/api.md (GET /v1/search) where the query language leaves a choice:
 * - A quote opens a phrase wherever it appears (`say"hello world"` is `say` and `hello world`).
 * - An unclosed quote runs to the end of the query, as a user typing it would mean.
 * - A phrase is trimmed but its inner whitespace is kept: it must match the text as written.
 * - Empty phrases (`""`) are ignored; a query with no term at all is refused like a blank one.
 */
import {validationError} from '../errors.js'
import {requestTextProblem} from '../request-text.js'

/** A parsed search query: every term must match (AND); a term is a word or a quoted phrase. */
export interface SearchQuery {
  terms: string[]
}

// A quoted phrase (closing quote optional at the end) or a run of characters that are neither
// whitespace nor quotes.
const TERM = /"([^"]*)(?:"|$)|[^\s"]+/g

export function parseSearchQuery(q: string): SearchQuery {
  const problem = requestTextProblem(q)
  if (problem !== undefined) throw validationError([{field: 'q', message: problem}])
  const terms: string[] = []
  for (const match of q.matchAll(TERM)) {
    const term = (match[1] ?? match[0]).trim().toLowerCase()
    if (term !== '') terms.push(term)
  }
  if (terms.length === 0) {
    const message = q.trim() === '' ? 'must not be blank' : 'must contain at least one search term'
    throw validationError([{field: 'q', message}])
  }
  return {terms}
}
