/**
 * Text a request hands to a store to compare or look up: a filter, a search query, a scope, an id
 * in a path (docs/api.md, GET /v1/events). PostgreSQL's text holds no U+0000, and no
 * store holds an unpaired surrogate (RFC 7493 2.1; core/event/text.ts), so such text is refused
 * here, before any store, and both stores answer it alike. Every other character, quotes and `%`
 * included, is compared as plain text by both stores.
 */
import type {FieldError} from './errors.js'
import {isWellFormedText} from './event/text.js'

/** Why `value` cannot be compared with stored text, or undefined when it can. */
export function requestTextProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain the character U+0000'
  if (!isWellFormedText(value)) return 'must not contain unpaired surrogates'
  return undefined
}

/** `value` when a store can compare it; otherwise undefined and a field error for `field`. */
export function checkRequestText(value: string, field: string, errors: FieldError[]): string | undefined {
  const problem = requestTextProblem(value)
  if (problem === undefined) return value
  errors.push({field, message: problem})
  return undefined
}

/**
 * The id of a path (`/v1/events/:id`, `/v1/merkle/proof/:id`) as stored ids are (lower case), or
 * undefined for one no event can have: the caller answers 404 as for any unknown id.
 */
export function lookupId(id: string): string | undefined {
  return requestTextProblem(id) === undefined ? id.toLowerCase() : undefined
}
