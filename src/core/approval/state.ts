/**
 * The approvals as the log holds them (docs/oversight.md): each `APPROVAL_REQUESTED` opens one,
 * the decision event whose `parent_id` is its id closes it. Read from stored events alone, so
 * every process sharing a database, and a service started again, answers the same.
 */
import type {StoredEvent} from '../types.js'
import {
  APPROVAL_DENIED,
  APPROVAL_GRANTED,
  APPROVAL_REQUESTED,
  APPROVAL_STATES,
  type ApprovalOutcome,
  type ApprovalState,
} from './events.js'

export interface ApprovalDecision {
  outcome: ApprovalOutcome
  reason: string | null
  decided_by: string
  decided_at: string
  event_id: string
  index: number
}

/** An approval as the API shows it. */
export interface ApprovalView {
  id: string
  state: ApprovalState
  agent_id: string
  action_type: string
  action_name: string
  /** The call's arguments (absent once erased). */
  input?: unknown
  rule: string
  rule_type: string
  call_event_id: string
  trace_id: string | null
  session_id: string | null
  requested_at: string
  expires_at: string | null
  /** The proxy that holds the call (docs/oversight.md). */
  held_by: string | null
  index: number
  decision: ApprovalDecision | null
}

function requestView(event: StoredEvent): ApprovalView {
  const labels = event.labels ?? {}
  const view: ApprovalView = {
    id: event.id,
    state: 'pending',
    agent_id: labels.agent_id ?? '',
    action_type: labels.action_type ?? '',
    action_name: event.action_name,
    rule: labels.rule ?? '',
    rule_type: labels.rule_type ?? '',
    call_event_id: labels.call_event_id ?? event.parent_id ?? '',
    trace_id: event.trace_id ?? null,
    session_id: event.session_id ?? null,
    requested_at: event.recorded_at,
    expires_at: labels.expires_at ?? null,
    held_by: labels.held_by ?? null,
    index: event.index,
    decision: null,
  }
  if (event.input !== undefined) view.input = event.input
  return view
}

function outcomeOf(event: StoredEvent): ApprovalOutcome {
  if (event.action_type === APPROVAL_GRANTED) return 'approved'
  const told = event.labels?.outcome
  return (APPROVAL_STATES as readonly string[]).includes(told ?? '') && told !== 'pending' && told !== 'approved'
    ? (told as ApprovalOutcome)
    : 'denied'
}

export class ApprovalBook {
  readonly #byId = new Map<string, ApprovalView>()
  /** The index after the last event read. */
  nextIndex = 0

  apply(event: StoredEvent): void {
    this.nextIndex = Math.max(this.nextIndex, event.index + 1)
    if (event.action_type === APPROVAL_REQUESTED) {
      if (!this.#byId.has(event.id)) this.#byId.set(event.id, requestView(event))
      return
    }
    if (event.action_type !== APPROVAL_GRANTED && event.action_type !== APPROVAL_DENIED) return
    const approval = this.#byId.get(event.parent_id ?? '')
    // The decision's id is derived from the request's (events.ts), so there is at most one.
    if (approval === undefined || approval.decision !== null) return
    const outcome = outcomeOf(event)
    approval.state = outcome
    approval.decision = {
      outcome,
      reason: event.labels?.reason ?? null,
      decided_by: event.labels?.decided_by ?? '',
      decided_at: event.recorded_at,
      event_id: event.id,
      index: event.index,
    }
  }

  get(id: string): ApprovalView | undefined {
    return this.#byId.get(id.toLowerCase())
  }

  /** Every approval in request order. */
  all(): ApprovalView[] {
    return [...this.#byId.values()].sort((a, b) => a.index - b.index)
  }
}
