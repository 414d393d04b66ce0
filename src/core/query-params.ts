/**
 * Parsing of the query parameters of GET /v1/events, /v1/search and /v1/export (docs/api.md,
 * Query). The HTTP routes and the CLI flags both go through here, so they accept and
 * refuse exactly the same values.
 */
import {validationError, type FieldError} from './errors.js'
import {normalizeTimestamp} from './event/timestamp.js'
import {checkRequestText} from './request-text.js'
import type {EventFilter, Page} from './types.js'

export type QueryParams = Record<string, string | string[] | undefined>

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000

/** `2026-11-21T22:45Z`: the minute, then straight the zone. */
const WITHOUT_SECONDS = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2})(?=[Zz+-])/
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const LABEL_KEY = /^[A-Za-z0-9_.:-]{1,64}$/
/** An event holds at most 64 labels, so more label filters can match nothing, and cost a query plan each. */
export const MAX_LABEL_FILTERS = 64

/** The one value of a parameter, refused when it is given twice or holds text no store can compare. */
function single(params: QueryParams, name: string, errors: FieldError[]): string | undefined {
  const value = params[name]
  if (Array.isArray(value)) {
    errors.push({field: name, message: 'must be given at most once'})
    return undefined
  }
  return value === undefined ? undefined : checkRequestText(value, name, errors)
}

/**
 * An ISO 8601 time with a timezone, normalised to UTC by the rules of an event's `timestamp`
 * (core/event/timestamp.ts: real calendar dates and times of day, UTC years 0000..9999), so that a
 * filter means what an event's time can mean. Two forms more, as ISO 8601 allows: a plain date
 * (midnight UTC) and hh:mm without seconds.
 */
export function parseTime(value: string, field: string, errors: FieldError[]): string | undefined {
  const text = (DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value).replace(WITHOUT_SECONDS, '$1:00')
  const result = normalizeTimestamp(text)
  if ('error' in result) {
    const form = 'an ISO 8601 time with a timezone, for example 2026-11-21T22:45:00Z'
    errors.push({field, message: /^must /.test(result.error) ? `must be ${form}` : `${result.error} (${form})`})
    return undefined
  }
  return SUB_MILLISECOND.test(text) ? nextMillisecond(result.value) : result.value
}

/** A fraction of a second with a non-zero digit after the milliseconds. */
const SUB_MILLISECOND = /:\d\d\.\d{3}\d*[1-9]/

/**
 * Bounds are compared with times stored to the millisecond (an event's timestamp is truncated to
 * it), so a bound between two milliseconds is moved up to the next one: exact both for `since`
 * (inclusive: 59.9995 admits 60.000, not 59.999) and for `until` (exclusive: 59.9991 admits 59.999).
 * Past the last millisecond of year 9999 there is no later time to move to: the bound stays there
 * (the one place this is not exact: a `since` there admits an event at that last millisecond).
 */
function nextMillisecond(utc: string): string {
  const next = new Date(Date.parse(utc) + 1)
  return next.getUTCFullYear() > 9999 ? utc : next.toISOString()
}

function parseInteger(
  value: string,
  field: string,
  min: number,
  max: number,
  errors: FieldError[],
): number | undefined {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    errors.push({field, message: `must be an integer from ${min} to ${max}`})
    return undefined
  }
  return Number(value)
}

/** `limit` 1..1000 (default 100) and `offset` >= 0 (default 0). */
export function parsePage(params: QueryParams, errors: FieldError[]): Page {
  const limit = single(params, 'limit', errors)
  const offset = single(params, 'offset', errors)
  return {
    limit: limit === undefined ? DEFAULT_LIMIT : (parseInteger(limit, 'limit', 1, MAX_LIMIT, errors) ?? DEFAULT_LIMIT),
    offset: offset === undefined ? 0 : (parseInteger(offset, 'offset', 0, Number.MAX_SAFE_INTEGER, errors) ?? 0),
  }
}

/**
 * Every member a selection (an EventFilter, the `filters` of an evidence package) can have, with
 * the kind of its value: the one list, given by docs/verification.md section 4 and accepted by the
 * package verifier. `satisfies` keeps it equal to EventFilter's members.
 */
export const FILTER_MEMBERS = {
  agent_id: 'text',
  action_type: 'text',
  trace_id: 'text',
  session_id: 'text',
  since: 'time',
  until: 'time',
  labels: 'labels',
  agents: 'patterns',
} as const satisfies Record<keyof EventFilter, 'text' | 'time' | 'labels' | 'patterns'>

/** agent_id, action_type, trace_id, session_id, since, until and label.<key> filters. */
export function parseFilter(params: QueryParams, errors: FieldError[]): EventFilter {
  const filter: EventFilter = {}
  const agentId = single(params, 'agent_id', errors)
  const actionType = single(params, 'action_type', errors)
  const traceId = single(params, 'trace_id', errors)
  const sessionId = single(params, 'session_id', errors)
  const since = single(params, 'since', errors)
  const until = single(params, 'until', errors)
  if (agentId !== undefined) filter.agent_id = agentId
  if (actionType !== undefined) filter.action_type = actionType
  if (traceId !== undefined) filter.trace_id = traceId
  if (sessionId !== undefined) filter.session_id = sessionId
  if (since !== undefined) filter.since = parseTime(since, 'since', errors)
  if (until !== undefined) filter.until = parseTime(until, 'until', errors)
  const labelNames = Object.keys(params).filter((name) => name.startsWith('label.'))
  if (labelNames.length > MAX_LABEL_FILTERS) {
    const message = `at most ${MAX_LABEL_FILTERS} label filters (an event holds at most ${MAX_LABEL_FILTERS} labels)`
    errors.push({field: 'label.*', message})
    return filter
  }
  for (const name of labelNames) {
    const key = name.slice('label.'.length)
    const value = single(params, name, errors)
    if (!LABEL_KEY.test(key)) errors.push({field: name, message: 'label key must match ^[A-Za-z0-9_.:-]{1,64}$'})
    // Defined, not assigned: `label.__proto__=x` is a label key like any other (assigning would set the prototype).
    else if (value !== undefined)
      Object.defineProperty((filter.labels ??= {}), key, {value, enumerable: true, writable: true, configurable: true})
  }
  return filter
}

/** GET /v1/events: filters and page together; throws validation_error listing every bad parameter. */
export function parseEventQuery(params: QueryParams): {filter: EventFilter; page: Page} {
  const errors: FieldError[] = []
  const filter = parseFilter(params, errors)
  const page = parsePage(params, errors)
  if (errors.length > 0) throw validationError(errors)
  return {filter, page}
}

/** A yes/no query parameter such as `receipts=true` of GET /v1/export: `true` or `false`, at most once. */
export function parseBooleanParam(params: QueryParams, name: string): boolean {
  const errors: FieldError[] = []
  const value = single(params, name, errors)
  if (value !== undefined && value !== 'true' && value !== 'false')
    errors.push({field: name, message: 'must be true or false'})
  if (errors.length > 0) throw validationError(errors)
  return value === 'true'
}

/** GET /v1/export: filters only. */
export function parseExportQuery(params: QueryParams): EventFilter {
  const errors: FieldError[] = []
  const filter = parseFilter(params, errors)
  if (errors.length > 0) throw validationError(errors)
  return filter
}

/**
 * GET /v1/stream (docs/api.md, Real-time): the agent_id and action_type filters and
 * from_index, each at most once, as for GET /v1/events; throws validation_error listing every bad one.
 */
export function parseStreamQuery(params: QueryParams): {
  filter: {agent_id?: string; action_type?: string}
  fromIndex?: number
} {
  const errors: FieldError[] = []
  const filter: {agent_id?: string; action_type?: string} = {}
  const agentId = single(params, 'agent_id', errors)
  const actionType = single(params, 'action_type', errors)
  const from = single(params, 'from_index', errors)
  if (agentId !== undefined) filter.agent_id = agentId
  if (actionType !== undefined) filter.action_type = actionType
  if (from !== undefined && !/^\d+$/.test(from))
    errors.push({field: 'from_index', message: 'must be a non-negative integer'})
  if (errors.length > 0) throw validationError(errors)
  return {filter, fromIndex: from === undefined ? undefined : Number(from)}
}

/** GET /v1/verify: `agent_id`, at most once (absent: every agent); throws validation_error. */
export function parseVerifyQuery(params: QueryParams): {agentId?: string} {
  const errors: FieldError[] = []
  const agentId = single(params, 'agent_id', errors)
  if (errors.length > 0) throw validationError(errors)
  return agentId === undefined ? {} : {agentId}
}
