/**
 * W3C Trace Context (Trace Context Level 1, section 3.2 `traceparent`) carried in a request's
 * `_meta` (MCP SEP-414: `_meta.traceparent`), so that an MCP call and the OpenTelemetry spans of
 * the same run share `trace_id` (docs/otlp.md records spans with the same lower-case hex ids).
 */

/** version "-" trace-id "-" parent-id "-" trace-flags, lower-case hex (section 3.2.2). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ALL_ZERO = /^0+$/

interface TraceIds {
  trace_id: string
  parent_id: string
}

/**
 * The trace and parent span of a `traceparent` value, or undefined for one that section 3.2.2
 * says to ignore: an unknown shape, version ff, all-zero ids, or extra fields on version 00.
 */
export function parseTraceparent(value: unknown): TraceIds | undefined {
  if (typeof value !== 'string') return undefined
  const match = TRACEPARENT.exec(value.trim())
  if (!match) return undefined
  const [, version, traceId, parentId, , rest] = match
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (ALL_ZERO.test(traceId!) || ALL_ZERO.test(parentId!)) return undefined
  return {trace_id: traceId!, parent_id: parentId!}
}

/** The trace context of a request's params, from `params._meta.traceparent`. */
export function traceOf(params: unknown): TraceIds | undefined {
  const meta = (params as {_meta?: {traceparent?: unknown}} | undefined)?._meta
  return typeof meta === 'object' && meta !== null ? parseTraceparent(meta.traceparent) : undefined
}
