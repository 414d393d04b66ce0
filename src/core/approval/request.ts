/**
 * The bodies of the approvals API (docs/oversight.md): a held call (`POST /v1/approvals`, from the
 * proxy), a person's decision (`POST /v1/approvals/<id>`), a proxy's close (`.../close`) and the
 * list's filters. Every problem is reported at once, with its field, and nothing is recorded.
 */
import {validationError, type FieldError} from '../errors.js'
import {checkText} from '../event/text.js'
import {parseTime, type QueryParams} from '../query-params.js'
import {checkRequestText} from '../request-text.js'
import {APPROVAL_STATES, CLOSING_OUTCOMES, type ApprovalOutcome, type ApprovalState, type HeldCall} from './events.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ACTION_TYPE = /^[A-Z][A-Z0-9_]*$/
const MAX_REASON = 1024

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw validationError([{field: 'body', message: 'must be a JSON object'}])
  return body as Record<string, unknown>
}

function unknownFields(body: Record<string, unknown>, known: readonly string[], errors: FieldError[]): void {
  for (const field of Object.keys(body))
    if (!known.includes(field)) errors.push({field, message: `is not a field of this request (${known.join(', ')})`})
}

function text(body: Record<string, unknown>, field: string, max: number, errors: FieldError[], required = true) {
  const value = body[field]
  if (value === undefined) {
    if (required) errors.push({field, message: 'is required'})
    return
  }
  const problem = checkText(value, {max, noControl: true})
  if (problem !== undefined) errors.push({field, message: problem})
}

const HELD_FIELDS = [
  'agent_id',
  'action_type',
  'action_name',
  'call_event_id',
  'rule',
  'rule_type',
  'input',
  'trace_id',
  'session_id',
  'expires_at',
  'held_by',
] as const

/** POST /v1/approvals: the call the proxy holds. */
export function parseHeldCall(raw: unknown): HeldCall {
  const body = objectBody(raw)
  const errors: FieldError[] = []
  unknownFields(body, HELD_FIELDS, errors)
  for (const field of ['agent_id', 'action_name', 'rule', 'rule_type'] as const) text(body, field, 256, errors)
  for (const field of ['trace_id', 'session_id', 'held_by'] as const) text(body, field, 256, errors, false)
  if (typeof body.action_type !== 'string' || !ACTION_TYPE.test(body.action_type) || body.action_type.length > 64)
    errors.push({field: 'action_type', message: 'must be 1 to 64 characters of A-Z 0-9 _, starting with a letter'})
  if (typeof body.call_event_id !== 'string' || !UUID.test(body.call_event_id))
    errors.push({field: 'call_event_id', message: 'must be the UUID the call event will have'})
  let expiresAt: string | undefined
  if (body.expires_at !== undefined) {
    if (typeof body.expires_at === 'string') expiresAt = parseTime(body.expires_at, 'expires_at', errors)
    else errors.push({field: 'expires_at', message: 'must be an RFC 3339 time'})
  }
  if (errors.length > 0) throw validationError(errors)
  const call = {...body, call_event_id: (body.call_event_id as string).toLowerCase()} as unknown as HeldCall
  if (expiresAt !== undefined) call.expires_at = expiresAt
  return call
}

function reasonOf(body: Record<string, unknown>, errors: FieldError[]): string | undefined {
  if (body.reason === undefined) return undefined
  const problem = checkText(body.reason, {max: MAX_REASON, noControl: true})
  if (problem !== undefined) errors.push({field: 'reason', message: problem})
  return problem === undefined ? (body.reason as string) : undefined
}

/** POST /v1/approvals/<id>: `{"decision": "approve" | "deny", "reason"?}`. */
export function parseDecision(raw: unknown): {outcome: 'approved' | 'denied'; reason?: string} {
  const body = objectBody(raw)
  const errors: FieldError[] = []
  unknownFields(body, ['decision', 'reason'], errors)
  if (body.decision !== 'approve' && body.decision !== 'deny')
    errors.push({field: 'decision', message: 'must be "approve" or "deny"'})
  const reason = reasonOf(body, errors)
  if (errors.length > 0) throw validationError(errors)
  const decision = {outcome: body.decision === 'approve' ? ('approved' as const) : ('denied' as const)}
  return reason === undefined ? decision : {...decision, reason}
}

/** POST /v1/approvals/<id>/close: `{"outcome": "timeout" | "cancelled" | "abandoned", "reason"?}`. */
export function parseClose(raw: unknown): {outcome: ApprovalOutcome; reason?: string} {
  const body = objectBody(raw)
  const errors: FieldError[] = []
  unknownFields(body, ['outcome', 'reason'], errors)
  if (!(CLOSING_OUTCOMES as readonly unknown[]).includes(body.outcome))
    errors.push({field: 'outcome', message: `must be one of ${CLOSING_OUTCOMES.join(', ')}`})
  const reason = reasonOf(body, errors)
  if (errors.length > 0) throw validationError(errors)
  const close = {outcome: body.outcome as ApprovalOutcome}
  return reason === undefined ? close : {...close, reason}
}

export interface ApprovalFilter {
  state?: ApprovalState
  agent_id?: string
  since?: string
  limit: number
}

/** GET /v1/approvals: `state`, `agent_id`, `since` (on the request's time), `limit` (1..1000, default 100). */
export function parseApprovalFilter(params: QueryParams): ApprovalFilter {
  const errors: FieldError[] = []
  const one = (name: string) => {
    const value = params[name]
    if (Array.isArray(value)) errors.push({field: name, message: 'must be given at most once'})
    return typeof value === 'string' ? checkRequestText(value, name, errors) : undefined
  }
  unknownFields(params as Record<string, unknown>, ['state', 'agent_id', 'since', 'limit'], errors)
  const filter: ApprovalFilter = {limit: 100}
  const state = one('state')
  if (state !== undefined && !(APPROVAL_STATES as readonly string[]).includes(state))
    errors.push({field: 'state', message: `must be one of ${APPROVAL_STATES.join(', ')}`})
  else if (state !== undefined) filter.state = state as ApprovalState
  const agent = one('agent_id')
  if (agent !== undefined) filter.agent_id = agent
  const since = one('since')
  if (since !== undefined) filter.since = parseTime(since, 'since', errors)
  const limit = one('limit')
  if (limit !== undefined) {
    if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000)
      errors.push({field: 'limit', message: 'must be an integer from 1 to 1000'})
    else filter.limit = Number(limit)
  }
  if (errors.length > 0) throw validationError(errors)
  return filter
}

export const REQUEST_ID = UUID
