/**
 * One event per MCP request and its outcome (docs/mcp.md): `TOOL_CALL` for `tools/call`,
 * `MCP_REQUEST` otherwise; the arguments as `input`, the result as `output` (each within the
 * record limit), the request's time as `timestamp` and its round trip as `duration_ms`. Each event
 * gets its `id` here, so that resending it after a lost answer is an idempotent retry (docs/api.md).
 */
import {v7 as uuidv7} from 'uuid'
import type {JsonRpcErrorObject, JsonRpcId} from '../jsonrpc.js'
import {recordValue} from './recorded-value.js'
import {cleanText, type CallContext} from './session.js'
import {traceOf} from './trace-context.js'

/** A request the proxy saw, waiting for its outcome. */
export interface CallRecord {
  /** Who sent the request: the client (the agent's own calls) or the server (sampling, elicitation...). */
  direction: 'client' | 'server'
  id: JsonRpcId
  method: string
  params: unknown
  /** Wall-clock time of the request (ms since the epoch), and a monotonic reading for its duration. */
  startedAt: number
  startedTick: number
  context: CallContext
  /** The event's id when it had to be known before the call ended (a held call's approval names it). */
  eventId?: string
  /** The approval the call waited for (docs/oversight.md): its request and decision events. */
  approval?: {id: string; decisionEventId: string; decidedBy: string}
}

export type CallOutcome =
  | {kind: 'result'; result: unknown}
  | {kind: 'error'; error: JsonRpcErrorObject}
  | {kind: 'cancelled'; reason?: string}
  | {kind: 'denied'; message: string; refusal: Record<string, unknown>}
  | {kind: 'unanswered'; reason: string}
  /** A response relayed but too large to observe: its size, and whether it was an error. */
  | {kind: 'unobserved'; bytes: number; limit: number; error: boolean}

/** The error member's limit (docs/api.md), kept a little under so it holds in code points too. */
const MAX_ERROR = 8000

export const TOOL_CALL = 'tools/call'

export function actionTypeOf(method: string): string {
  return method === TOOL_CALL ? 'TOOL_CALL' : 'MCP_REQUEST'
}

/** The tool's name for `tools/call`, else the method (docs/api.md: 1..256 characters, one line). */
export function actionNameOf(method: string, params: unknown): string {
  const name = method === TOOL_CALL ? (params as {name?: unknown} | undefined)?.name : undefined
  return cleanText(name, 256) ?? cleanText(method, 256) ?? 'unnamed'
}

/** The arguments of a tool call; for any other request its params without `_meta`. */
export function inputOf(method: string, params: unknown): unknown {
  if (typeof params !== 'object' || params === null) return params
  if (Array.isArray(params)) return params
  const {_meta: _ignored, ...rest} = params as Record<string, unknown>
  if (method === TOOL_CALL) return rest.arguments
  return Object.keys(rest).length === 0 ? undefined : rest
}

/** The text of a tool result with `isError` (MCP "Tools", error handling): its first text content. */
function toolErrorText(result: unknown): string | undefined {
  const r = result as {isError?: unknown; content?: unknown} | undefined
  if (r?.isError !== true) return undefined
  const text = Array.isArray(r.content)
    ? (r.content.find((c) => (c as {type?: unknown})?.type === 'text') as {text?: unknown} | undefined)?.text
    : undefined
  return typeof text === 'string' && text !== '' ? `the tool reported an error: ${text}` : 'the tool reported an error'
}

function clip(text: string): string {
  return text.length <= MAX_ERROR ? text : `${text.slice(0, MAX_ERROR - 1)}…`
}

/** How a call ended, as members of its event. */
interface Ending {
  status: 'success' | 'error' | 'cancelled' | 'denied'
  error?: string
  /** The output, recorded within the record limit. */
  output?: unknown
  /** What stands for an output relayed without being observed. */
  unobserved?: {omitted: true; reason: string; size: number}
  refused?: Record<string, unknown>
}

function endingOf(call: CallRecord, outcome: CallOutcome): Ending {
  switch (outcome.kind) {
    case 'result': {
      const toolError = call.method === TOOL_CALL ? toolErrorText(outcome.result) : undefined
      if (toolError === undefined) return {status: 'success', output: outcome.result}
      return {status: 'error', error: clip(toolError), output: outcome.result}
    }
    case 'error':
      return {
        status: 'error',
        error: clip(`JSON-RPC error ${outcome.error.code}: ${outcome.error.message}`),
        output: outcome.error,
      }
    case 'cancelled': {
      const by = `cancelled by the ${call.direction === 'client' ? 'client' : 'server'}`
      return {status: 'cancelled', error: clip(by + (outcome.reason ? `: ${outcome.reason}` : ''))}
    }
    case 'denied':
      return {status: 'denied', error: clip(outcome.message), refused: outcome.refusal}
    case 'unanswered':
      return {status: 'error', error: clip(`no response: ${outcome.reason}`)}
    case 'unobserved': {
      const reason =
        `the response (${outcome.bytes} bytes) was relayed, ` +
        `but is larger than the ${outcome.limit} the proxy observes`
      const unobserved = {omitted: true as const, reason, size: outcome.bytes}
      if (!outcome.error) return {status: 'success', unobserved}
      return {status: 'error', error: clip(`JSON-RPC error (${reason})`), unobserved}
    }
  }
}

/** The members of a call's event known from the request: who, what, when, and its labels. */
function eventHead(call: CallRecord, endedTick: number): Record<string, unknown> {
  const head: Record<string, unknown> = {
    id: call.eventId ?? uuidv7(),
    agent_id: call.context.agentId,
    action_type: actionTypeOf(call.method),
    action_name: actionNameOf(call.method, call.params),
    action_status: 'success',
    timestamp: new Date(call.startedAt).toISOString(),
    duration_ms: Math.max(0, Math.round((endedTick - call.startedTick) * 1000) / 1000),
    labels: call.approval
      ? {
          ...call.context.labels,
          'approval.id': call.approval.id,
          'approval.decision': call.approval.decisionEventId,
          'approval.decided_by': call.approval.decidedBy,
        }
      : call.context.labels,
  }
  if (call.context.sessionId !== undefined) head.session_id = call.context.sessionId
  const trace = traceOf(call.params)
  if (trace) Object.assign(head, trace)
  return head
}

/** The event of `call` ending with `outcome` at monotonic time `endedTick`. */
export function callEvent(
  call: CallRecord,
  outcome: CallOutcome,
  endedTick: number,
  recordLimit: number,
): Record<string, unknown> {
  const body = eventHead(call, endedTick)
  const omitted: string[] = []
  const put = (member: 'input' | 'output', value: unknown) => {
    if (value === undefined) return
    const recorded = recordValue(value, recordLimit)
    body[member] = recorded.value
    if (recorded.omitted) omitted.push(member)
  }
  put('input', inputOf(call.method, call.params))
  const ending = endingOf(call, outcome)
  body.action_status = ending.status
  put('output', ending.output)
  if (ending.unobserved) {
    body.output = ending.unobserved
    omitted.push('output')
  }
  if (ending.error !== undefined) body.error = ending.error
  const id = typeof call.id === 'string' ? (cleanText(call.id, 256) ?? '') : call.id
  const metadata: Record<string, unknown> = {jsonrpc_id: id, method: cleanText(call.method, 256) ?? ''}
  if (ending.refused) metadata.refused = ending.refused
  if (omitted.length > 0) metadata.omitted = omitted
  body.metadata = metadata
  return body
}
