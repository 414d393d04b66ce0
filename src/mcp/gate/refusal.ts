/**
 * Whether a client's request may be forwarded, decided beside the policy rules (docs/mcp.md,
 * docs/oversight.md): a request whose routing headers disagree with its body, one whose event the
 * log could not take now (a full queue, `--require-log`) and one a policy rule forbids are refused;
 * one a `"action": "hold"` rule holds waits for a person's decision when the proxy can ask for one.
 */
import {REFUSAL_CODES} from '../jsonrpc.js'
import {actionNameOf, actionTypeOf, type CallRecord} from '../record/call-event.js'
import type {PolicyGate} from './policy-gate.js'

/** Requests that open or probe a session: never refused, or no session could even start. */
const LIFECYCLE = new Set(['initialize', 'ping', 'server/discover'])

/** A request not forwarded: the JSON-RPC error it gets and what its `denied` event says. */
export interface Refusal {
  message: string
  code: number
  refusal: Record<string, unknown>
  /** Not refused but held, by this rule. */
  hold?: {name: string; type: string}
}

export interface GateOptions {
  /** Why the log cannot take a call's event now, if it cannot. */
  logRefusal(): string | undefined
  policy?: PolicyGate
  /** Whether a held call can be put to a person (the proxy records approvals). */
  canHold: boolean
}

/**
 * The refusal or hold of a client's request, undefined when it may go. `mismatch`: why the
 * request's routing headers disagree with its body (every request of the frame is refused).
 */
export function refusalOf(call: CallRecord, gate: GateOptions, mismatch?: string): Refusal | undefined {
  if (mismatch !== undefined)
    return {message: `refused: ${mismatch}`, code: -32600, refusal: {refused_by: 'routing_headers'}}
  if (LIFECYCLE.has(call.method)) return undefined
  const log = gate.logRefusal()
  if (log !== undefined)
    return {message: `refused: ${log}`, code: REFUSAL_CODES.logUnavailable, refusal: {refused_by: 'audit_log'}}
  const verdict = gate.policy?.check({
    agent_id: call.context.agentId,
    action_type: actionTypeOf(call.method),
    action_name: actionNameOf(call.method, call.params),
    labels: call.context.labels,
  })
  if (verdict === undefined) return undefined
  if (verdict.hold && gate.canHold)
    return {
      message: verdict.message,
      code: REFUSAL_CODES.policy,
      refusal: {},
      hold: {name: verdict.rule, type: verdict.type},
    }
  return {
    message: verdict.message,
    code: REFUSAL_CODES.policy,
    refusal: {refused_by: 'policy', rule: verdict.rule, rule_type: verdict.type},
  }
}
