/**
 * The events of human oversight (docs/oversight.md): the service records `APPROVAL_REQUESTED`
 * when a call is held and `APPROVAL_GRANTED` or `APPROVAL_DENIED` when it is decided, under its
 * own agent `audit-trail:approvals`. The facts a decision needs (the call's agent, the rule, who
 * decided) are labels, which the hash covers and no erasure removes; the call's arguments are the
 * request's `input`, erasable like any payload.
 */
import {v5 as uuidv5} from 'uuid'
import {RESERVED_AGENT_PREFIX} from '../event/validate.js'

export const APPROVALS_AGENT = `${RESERVED_AGENT_PREFIX}approvals`
export const APPROVAL_REQUESTED = 'APPROVAL_REQUESTED'
export const APPROVAL_GRANTED = 'APPROVAL_GRANTED'
export const APPROVAL_DENIED = 'APPROVAL_DENIED'

/**
 * How an approval ended: decided by a person (`approved`, `denied`), or closed by the proxy that
 * held the call (`timeout`: nobody decided in time; `cancelled`: the client gave up; `abandoned`:
 * the proxy stopped while holding it).
 */
export type ApprovalOutcome = 'approved' | 'denied' | 'timeout' | 'cancelled' | 'abandoned'
export type ApprovalState = 'pending' | ApprovalOutcome
export const APPROVAL_STATES: readonly ApprovalState[] = [
  'pending',
  'approved',
  'denied',
  'timeout',
  'cancelled',
  'abandoned',
]
/** The outcomes the proxy itself records, with a `write` key: never a person's decision. */
export const CLOSING_OUTCOMES: readonly ApprovalOutcome[] = ['timeout', 'cancelled', 'abandoned']

/** A namespace of this project's own (RFC 9562 section 5.5) for the ids of decision events. */
const DECISION_NAMESPACE = 'f0b5b6a2-3c44-5e0b-9a57-8f3c2d1e4a60'

/**
 * The id of the one decision an approval can have: a name-based UUID (RFC 9562 section 5.5) of
 * the request's id. Every writer of a decision uses it, so the log's id check (an id is recorded
 * once; docs/api.md, idempotent retry) makes a second decision a conflict, whichever process races.
 */
export function decisionEventId(requestId: string): string {
  return uuidv5(requestId.toLowerCase(), DECISION_NAMESPACE)
}

/** What a held call is: the call the proxy will record, and the rule that held it. */
export interface HeldCall {
  agent_id: string
  action_type: string
  action_name: string
  /** The id the call's own event will have once it ends (the request's `parent_id`). */
  call_event_id: string
  rule: string
  rule_type: string
  input?: unknown
  trace_id?: string
  session_id?: string
  /** When the proxy stops waiting (RFC 3339): a timeout is recorded then. */
  expires_at?: string
  /** Which proxy holds it: the same proxy started again closes what it left pending. */
  held_by?: string
}

export function requestEventBody(call: HeldCall): Record<string, unknown> {
  const labels: Record<string, string> = {
    agent_id: call.agent_id,
    action_type: call.action_type,
    rule: call.rule,
    rule_type: call.rule_type,
    call_event_id: call.call_event_id,
  }
  if (call.expires_at !== undefined) labels.expires_at = call.expires_at
  if (call.held_by !== undefined) labels.held_by = call.held_by
  const body: Record<string, unknown> = {
    agent_id: APPROVALS_AGENT,
    action_type: APPROVAL_REQUESTED,
    action_name: call.action_name,
    action_status: 'pending',
    parent_id: call.call_event_id,
    labels,
  }
  if (call.input !== undefined) body.input = call.input
  if (call.trace_id !== undefined) body.trace_id = call.trace_id
  if (call.session_id !== undefined) body.session_id = call.session_id
  return body
}

export interface DecisionFacts {
  outcome: ApprovalOutcome
  reason?: string
  decided_by: string
}

/** The status of a decision event: the words of the event statuses (docs/api.md, the event). */
const STATUS_OF: Record<ApprovalOutcome, string> = {
  approved: 'success',
  denied: 'denied',
  timeout: 'timeout',
  cancelled: 'cancelled',
  abandoned: 'error',
}

/**
 * The decision on the approval whose request is `request`: linked to it by `parent_id` and to the
 * call by `trace_id`. `nonce` makes every attempt differ, so that a second one is a conflict and
 * never an idempotent retry of the first.
 */
export function decisionEventBody(
  request: {id: string; action_name: string; trace_id?: string; session_id?: string},
  facts: DecisionFacts,
  nonce: string,
): Record<string, unknown> {
  const labels: Record<string, string> = {
    approval_id: request.id,
    outcome: facts.outcome,
    decided_by: facts.decided_by,
  }
  const body: Record<string, unknown> = {
    id: decisionEventId(request.id),
    agent_id: APPROVALS_AGENT,
    action_type: facts.outcome === 'approved' ? APPROVAL_GRANTED : APPROVAL_DENIED,
    action_name: request.action_name,
    action_status: STATUS_OF[facts.outcome],
    parent_id: request.id,
    labels,
    metadata: {nonce},
  }
  if (facts.reason !== undefined) labels.reason = facts.reason
  if (request.trace_id !== undefined) body.trace_id = request.trace_id
  if (request.session_id !== undefined) body.session_id = request.session_id
  return body
}
