/**
 * The routing headers of Streamable HTTP in the 2026-07-28 revision (SEP-2243): `Mcp-Method`
 * mirrors a request's method, `Mcp-Name` its `params.name` (tools/call, prompts/get) or
 * `params.uri` (resources/*), Base64-wrapped as `=?base64?...?=` when not header-safe. A server
 * may route by them, so while a policy judges the body, a request whose headers say otherwise
 * is refused: what is judged is then what the server acts on.
 */
import type {Frame} from '../jsonrpc.js'

const BASE64_SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/

function decodeHeaderValue(value: string): string {
  const match = BASE64_SENTINEL.exec(value)
  return match ? Buffer.from(match[1]!, 'base64').toString('utf8') : value
}

/** What `Mcp-Name` mirrors for a request: `params.name`, else `params.uri`. */
function nameOf(params: unknown): string | undefined {
  const p = params as {name?: unknown; uri?: unknown} | undefined
  if (typeof p?.name === 'string') return p.name
  return typeof p?.uri === 'string' ? p.uri : undefined
}

/** Why the routing headers disagree with the one request of a POST body, or undefined when they agree. */
export function routingHeaderMismatch(headers: {method?: string; name?: string}, frame: Frame): string | undefined {
  if (!('messages' in frame) || frame.batch || frame.messages.length !== 1) return undefined
  const message = frame.messages[0]!
  if (message.kind !== 'request') return undefined
  if (headers.method !== undefined && headers.method !== message.method)
    return `the Mcp-Method header (${headers.method}) is not the method of the body (${message.method})`
  const name = nameOf(message.params)
  if (headers.name !== undefined && decodeHeaderValue(headers.name) !== name)
    return `the Mcp-Name header is not the name the body gives (${name ?? 'none'})`
  return undefined
}
