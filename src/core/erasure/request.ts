/**
 * The body of POST /v1/erasures (docs/erasure.md): `{"ids": [...]}` or `{"filter": {...}}`, plus
 * `members` (default all four), `reason` (required) and `requested_by`. Every problem is reported
 * at once, each naming its field, and nothing is recorded for a body with any.
 */
import {validationError, type FieldError} from '../errors.js'
import {checkText} from '../event/text.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import {parseFilter, type QueryParams} from '../query-params.js'
import type {EventFilter, PayloadMemberName} from '../types.js'

/** The most event ids one erasure names (a larger set is erased by a filter). */
export const MAX_ERASURE_IDS = 10_000

export interface ErasureRequest {
  /** Lower-cased, each once, in the order given. */
  ids?: string[]
  filter?: EventFilter
  members: PayloadMemberName[]
  reason: string
  requested_by?: string
}

const BODY_MEMBERS = ['ids', 'filter', 'members', 'reason', 'requested_by']
const FILTER_MEMBERS = ['agent_id', 'action_type', 'trace_id', 'session_id', 'since', 'until', 'labels']
// RFC 9562 section 4 layout, as an event's `id` (docs/api.md); any other string names no event.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function parseIds(value: unknown, errors: FieldError[]): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ERASURE_IDS) {
    errors.push({field: 'ids', message: `must be an array of 1 to ${MAX_ERASURE_IDS} event ids`})
    return undefined
  }
  const ids = new Set<string>()
  for (const [i, id] of value.entries()) {
    if (typeof id === 'string' && UUID.test(id)) ids.add(id.toLowerCase())
    else errors.push({field: `ids[${i}]`, message: 'must be an event id (a UUID)'})
  }
  return [...ids]
}

/**
 * The filters of GET /v1/events (docs/api.md), `labels` as an object, through the same parser as
 * the query string, so that an erasure selects exactly the events a listing with it shows.
 */
function parseErasureFilter(value: unknown, errors: FieldError[]): EventFilter | undefined {
  if (!isObject(value)) {
    errors.push({field: 'filter', message: 'must be an object of GET /v1/events filters'})
    return undefined
  }
  const params: QueryParams = {}
  const before = errors.length
  for (const [key, item] of Object.entries(value)) {
    if (!FILTER_MEMBERS.includes(key)) {
      errors.push({field: `filter.${key}`, message: `is not a filter (${FILTER_MEMBERS.join(', ')})`})
    } else if (key === 'labels') {
      if (!isObject(item)) errors.push({field: 'filter.labels', message: 'must be an object of label values'})
      else
        for (const [label, text] of Object.entries(item)) {
          if (typeof text === 'string') params[`label.${label}`] = text
          else errors.push({field: `filter.labels.${label}`, message: 'must be a string'})
        }
    } else if (typeof item === 'string') {
      params[key] = item
    } else {
      errors.push({field: `filter.${key}`, message: 'must be a string'})
    }
  }
  const problems: FieldError[] = []
  const filter = parseFilter(params, problems)
  for (const problem of problems) {
    const field = problem.field.startsWith('label.') ? `labels.${problem.field.slice(6)}` : problem.field
    errors.push({field: `filter.${field}`, message: problem.message})
  }
  if (errors.length > before) return undefined
  if (Object.keys(params).length === 0) {
    errors.push({field: 'filter', message: 'must name at least one filter (an empty filter would match every event)'})
    return undefined
  }
  return filter
}

function parseMembers(value: unknown, errors: FieldError[]): PayloadMemberName[] {
  if (value === undefined) return [...PAYLOAD_MEMBERS]
  const known: readonly string[] = PAYLOAD_MEMBERS
  if (!Array.isArray(value) || value.length === 0) {
    errors.push({field: 'members', message: `must be a non-empty array of ${PAYLOAD_MEMBERS.join(', ')}`})
    return []
  }
  for (const [i, member] of value.entries()) {
    if (typeof member !== 'string' || !known.includes(member)) {
      errors.push({field: `members[${i}]`, message: `must be one of ${PAYLOAD_MEMBERS.join(', ')}`})
    }
  }
  // In the order of docs/verification.md, each once.
  return PAYLOAD_MEMBERS.filter((member) => value.includes(member))
}

/** Parses and checks an erasure request; throws validation_error listing every problem. */
export function parseErasureRequest(body: unknown): ErasureRequest {
  if (!isObject(body)) {
    throw validationError([{field: 'body', message: 'must be an object {"ids" or "filter", "reason", ...}'}])
  }
  const errors: FieldError[] = []
  for (const key of Object.keys(body)) {
    if (!BODY_MEMBERS.includes(key)) errors.push({field: key, message: 'is not a member of an erasure request'})
  }
  const hasIds = body.ids !== undefined
  const hasFilter = body.filter !== undefined
  if (hasIds && hasFilter) errors.push({field: 'filter', message: 'must not be given with ids: give one of them'})
  if (!hasIds && !hasFilter) errors.push({field: 'ids', message: 'or filter is required'})
  const ids = hasIds ? parseIds(body.ids, errors) : undefined
  const filter = hasFilter && !hasIds ? parseErasureFilter(body.filter, errors) : undefined
  const members = parseMembers(body.members, errors)
  const reasonProblem = checkText(body.reason, {max: 1024, noControl: true})
  if (body.reason === undefined) errors.push({field: 'reason', message: 'is required (why the payload is erased)'})
  else if (reasonProblem !== undefined || (body.reason as string).trim() === '')
    errors.push({field: 'reason', message: reasonProblem ?? 'must not be blank'})
  const requestedBy = body.requested_by
  const requesterProblem = requestedBy === undefined ? undefined : checkText(requestedBy, {max: 256, noControl: true})
  if (requesterProblem !== undefined) errors.push({field: 'requested_by', message: requesterProblem})
  if (errors.length > 0) throw validationError(errors)
  const request: ErasureRequest = {members, reason: body.reason as string}
  if (ids !== undefined) request.ids = ids
  if (filter !== undefined) request.filter = filter
  if (requestedBy !== undefined) request.requested_by = requestedBy as string
  return request
}
