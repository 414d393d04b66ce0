/**
 * A client frame with calls a `"action": "hold"` rule holds (docs/oversight.md): each held call
 * gets the id of its future event, its approval is requested, and the frame waits. All approved:
 * it is forwarded. Otherwise nothing of it is: a denied (or timed-out) call gets a JSON-RPC error
 * naming the rule and the decision and is recorded `denied`; a call the client cancelled gets no
 * answer (MCP "Cancellation") and is recorded `cancelled`.
 */
import {v7 as uuidv7} from 'uuid'
import {
  actionNameOf,
  actionTypeOf,
  callEvent,
  inputOf,
  type CallOutcome,
  type CallRecord,
} from '../record/call-event.js'
import {errorResponse, REFUSAL_CODES, replyText, type JsonRpcId} from '../jsonrpc.js'
import type {HoldDesk, HoldOutcome} from './oversight.js'
import {recordValue} from '../record/recorded-value.js'
import {traceOf} from '../record/trace-context.js'

/** What a held frame came to: forwarded, or answered here (`reply` undefined: nobody waits for one). */
export type HeldDecision = {forward: true} | {forward: false; reply?: string}

export interface HeldCall {
  call: CallRecord
  /** The rule that holds it; undefined for a call of the same batch that no rule holds. */
  rule?: {name: string; type: string}
}

interface HoldingOptions {
  desk: HoldDesk
  recordLimit: number
  /** The held calls of the scope, by JSON-RPC id: aborting one releases it (`cancelled`). */
  held: Map<JsonRpcId, AbortController>
  record(event: unknown): void
  note(line: string): void
}

function heldRequest(call: CallRecord, rule: {name: string; type: string}, recordLimit: number) {
  const input = inputOf(call.method, call.params)
  const trace = traceOf(call.params)
  return {
    agent_id: call.context.agentId,
    action_type: actionTypeOf(call.method),
    action_name: actionNameOf(call.method, call.params),
    call_event_id: call.eventId!,
    rule: rule.name,
    rule_type: rule.type,
    ...(input !== undefined && {input: recordValue(input, recordLimit).value}),
    ...(trace && {trace_id: trace.trace_id}),
    ...(call.context.sessionId !== undefined && {session_id: call.context.sessionId}),
  }
}

/** The sentence a client reads about a hold that did not end in approval. */
function denialText(rule: {name: string; type: string}, outcome: HoldOutcome): string {
  const held = `held by policy rule "${rule.name}" (${rule.type})`
  const why = outcome.reason ? `: ${outcome.reason}` : ''
  switch (outcome.outcome) {
    case 'denied':
      return `${held} and denied by ${outcome.decidedBy ?? 'a person'}${why}`
    case 'timeout':
      return `${held} and denied by timeout${why}`
    case 'abandoned':
      return `${held}; the proxy stopped before a decision`
    case 'unavailable':
      return `${held}, but ${outcome.reason}`
    default:
      return `${held} and ${outcome.outcome}${why}`
  }
}

export async function settleHeld(calls: HeldCall[], batch: boolean, options: HoldingOptions): Promise<HeldDecision> {
  const outcomes = await Promise.all(
    calls.map(async ({call, rule}) => {
      if (rule === undefined) return undefined
      call.eventId = uuidv7()
      const control = new AbortController()
      options.held.set(call.id, control)
      try {
        return await options.desk.hold(heldRequest(call, rule, options.recordLimit), control.signal)
      } finally {
        options.held.delete(call.id)
      }
    }),
  )
  if (outcomes.every((o) => o === undefined || o.outcome === 'approved')) {
    calls.forEach(({call}, i) => {
      const o = outcomes[i]
      if (o?.approvalId && o.decisionEventId)
        call.approval = {id: o.approvalId, decisionEventId: o.decisionEventId, decidedBy: o.decidedBy ?? ''}
    })
    return {forward: true}
  }
  const replies = refuseHeld(calls, outcomes, options)
  return replies.length === 0 ? {forward: false} : {forward: false, reply: replyText(replies, batch)}
}

/** Records every call of a frame that does not go, and the error each one still waiting gets. */
function refuseHeld(
  calls: HeldCall[],
  outcomes: Array<HoldOutcome | undefined>,
  options: HoldingOptions,
): Array<Record<string, unknown>> {
  const first = calls.findIndex((_, i) => outcomes[i] !== undefined && outcomes[i]!.outcome !== 'approved')
  const firstText = denialText(calls[first]!.rule!, outcomes[first]!)
  const replies: Array<Record<string, unknown>> = []
  calls.forEach(({call, rule}, i) => {
    const outcome = outcomes[i]
    const tick = performance.now()
    if (outcome?.outcome === 'cancelled') {
      options.record(
        callEvent(call, {kind: 'cancelled', reason: outcome.reason ?? undefined}, tick, options.recordLimit),
      )
      return
    }
    const own = outcome !== undefined && outcome.outcome !== 'approved'
    const message = own
      ? denialText(rule!, outcome)
      : `not forwarded: another request of the same batch was ${firstText}`
    const refusal: Record<string, unknown> = {refused_by: 'approval', rule: (rule ?? calls[first]!.rule)!.name}
    if (outcome?.approvalId) Object.assign(refusal, {approval_id: outcome.approvalId, decision: outcome.outcome})
    if (outcome?.decidedBy) refusal.decided_by = outcome.decidedBy
    options.note(`${call.method} ${actionNameOf(call.method, call.params)}: ${message}`)
    const denied: CallOutcome = {kind: 'denied', message, refusal}
    options.record(callEvent(call, denied, tick, options.recordLimit))
    const code = outcome?.outcome === 'unavailable' ? REFUSAL_CODES.logUnavailable : REFUSAL_CODES.policy
    replies.push(errorResponse(call.id, {code, message, data: {audit_trail: refusal}}))
  })
  return replies
}
