/**
 * How a payload member (an MCP call's arguments or result) goes into its event: whole up to the
 * record limit, beyond it as its size and SHA-256 digest, so the event stays within the 1 MiB of
 * one event (docs/api.md) while whoever holds the value can still prove it is the one the call
 * carried. Size and digest are of the value's RFC 8785 (JCS) form: any JCS library reproduces them
 * from the value, whatever the key order or whitespace it was sent with.
 */
import canonicalize from 'canonicalize'
import {sha256Hex} from '../../core/crypto.js'
import {checkJsonValue} from '../../core/event/index.js'

/** The default record limit (`mcp-proxy --record-limit`), in bytes of JCS text per member. */
export const DEFAULT_RECORD_LIMIT = 256 * 1024
/** The largest record limit: two members at the limit still fit one event of 1 MiB. */
export const MAX_RECORD_LIMIT = 400 * 1024
/** How much of a value past the limit is kept, as the start of its JCS text, for search. */
const PREVIEW_CHARACTERS = 1024

interface OmittedValue {
  omitted: true
  reason: string
  size?: number
  sha256?: string
  preview?: string
}

export type Recorded = {value: unknown; omitted?: OmittedValue}

/** `value` as the event records it: itself, or an OmittedValue saying why and what it was. */
export function recordValue(value: unknown, limit: number): Recorded {
  const problem = checkJsonValue(value)
  if (problem !== undefined) {
    const omitted: OmittedValue = {omitted: true, reason: `the value cannot be recorded as JSON: it ${problem}`}
    return {value: omitted, omitted}
  }
  const text = canonicalize(value) ?? 'null'
  const size = Buffer.byteLength(text)
  if (size <= limit) return {value}
  const omitted: OmittedValue = {
    omitted: true,
    reason: `${size} bytes of JSON (RFC 8785), more than the record limit of ${limit}`,
    size,
    sha256: sha256Hex(text),
    preview: wellFormedPrefix(text, PREVIEW_CHARACTERS),
  }
  return {value: omitted, omitted}
}

/** The first `length` UTF-16 units of `text`, without splitting a surrogate pair. */
function wellFormedPrefix(text: string, length: number): string {
  if (text.length <= length) return text
  const last = text.charCodeAt(length - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length)
}
