/**
 * JSON-RPC 2.0 messages as MCP frames them (MCP "Base Protocol", JSON-RPC 2.0 section 4-6): parsed
 * only to observe them. What the proxy relays is always the bytes it received; the only text it
 * writes itself is the error response to a request it refuses.
 */

export type JsonRpcId = string | number

export interface JsonRpcErrorObject {
  code: number
  message: string
  data?: unknown
}

export type Message =
  | {kind: 'request'; id: JsonRpcId; method: string; params: unknown}
  | {kind: 'notification'; method: string; params: unknown}
  | {kind: 'result'; id: JsonRpcId; result: unknown}
  | {kind: 'error'; id: JsonRpcId | null; error: JsonRpcErrorObject}
  | {kind: 'invalid'; reason: string}

/** What one frame (a stdio line, an HTTP body, an SSE event's data) holds. */
export type Frame = {batch: boolean; messages: Message[]} | {unparsable: string}

/**
 * Error codes of the refusals the proxy answers itself, in the range JSON-RPC 2.0 section 5.1
 * leaves to implementations (-32000..-32099), clear of the ones the MCP SDKs use (-32000, -32001)
 * and of MCP's own (-32002, -32042). docs/mcp.md lists them.
 */
export const REFUSAL_CODES = {
  policy: -32010,
  logUnavailable: -32011,
  tooLarge: -32012,
} as const

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** One parsed JSON value as a JSON-RPC message (JSON-RPC 2.0 sections 4 and 5). */
function classify(value: unknown): Message {
  if (!isObject(value)) return {kind: 'invalid', reason: 'is not a JSON object'}
  if (value.jsonrpc !== '2.0') return {kind: 'invalid', reason: 'has no "jsonrpc": "2.0"'}
  if (typeof value.method === 'string') {
    if (!Object.hasOwn(value, 'id')) return {kind: 'notification', method: value.method, params: value.params}
    if (isId(value.id)) return {kind: 'request', id: value.id, method: value.method, params: value.params}
    return {kind: 'invalid', reason: 'is a request whose id is neither a string nor a number'}
  }
  if (Object.hasOwn(value, 'result')) {
    if (isId(value.id)) return {kind: 'result', id: value.id, result: value.result}
    return {kind: 'invalid', reason: 'is a result whose id is neither a string nor a number'}
  }
  if (isObject(value.error)) {
    const {code, message} = value.error
    if (typeof code === 'number' && typeof message === 'string' && (isId(value.id) || value.id === null))
      return {kind: 'error', id: value.id, error: value.error as unknown as JsonRpcErrorObject}
  }
  return {kind: 'invalid', reason: 'is neither a request, a notification nor a response'}
}

/** Parses one frame's text; a JSON array is a batch (JSON-RPC 2.0 section 6). */
export function parseFrame(text: string): Frame {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return {unparsable: (error as Error).message}
  }
  if (Array.isArray(value)) return {batch: true, messages: value.map(classify)}
  return {batch: false, messages: [classify(value)]}
}

/** A map key for an id: the number 1 and the string "1" are different ids. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`
}

/** An error response (JSON-RPC 2.0 section 5), the one kind of message the proxy writes itself. */
export function errorResponse(id: JsonRpcId | null, error: JsonRpcErrorObject): Record<string, unknown> {
  return {jsonrpc: '2.0', id, error}
}

/** The text of what answers a frame: one response, or an array for a batch (section 6). */
export function replyText(replies: ReadonlyArray<Record<string, unknown>>, batch: boolean): string {
  return JSON.stringify(batch ? replies : replies[0])
}
