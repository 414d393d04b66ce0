/**
 * An event as an OTLP log record (docs/forwarding.md, OTLP), the reverse of what the OTLP receiver
 * does (docs/otlp.md): the span's attributes the event keeps in `metadata.attributes` go out as the
 * record's attributes again, so a span's GenAI attributes reach the collector as they came in, and
 * the event's own fields are added under `audit_trail.*`. The body is the stored event as JSON.
 */
import type {StoredEvent} from '../../core/types.js'

type AnyValue = Record<string, unknown>
type KeyValue = {key: string; value: AnyValue}

/** OTLP logs data model, SeverityNumber: INFO, WARN, ERROR. */
const SEVERITY = {info: 9, warn: 13, error: 17}
const WARNING_STATUSES = new Set(['failure', 'denied', 'timeout', 'cancelled'])

/** An ExportLogsServiceRequest (proto3 JSON shape, ids in base64) of events of one trail. */
export function logsRequest(events: readonly StoredEvent[], trail: string): Record<string, unknown> {
  return {
    resourceLogs: [
      {
        resource: {attributes: [keyValue('service.name', 'audit-trail')]},
        scopeLogs: [{scope: {name: 'audit-trail'}, logRecords: events.map((event) => logRecord(event, trail))}],
      },
    ],
  }
}

function logRecord(event: StoredEvent, trail: string): Record<string, unknown> {
  const status = event.action_status
  const severity = status === 'error' ? SEVERITY.error : WARNING_STATUSES.has(status) ? SEVERITY.warn : SEVERITY.info
  const record: Record<string, unknown> = {
    timeUnixNano: unixNanos(event.timestamp),
    observedTimeUnixNano: unixNanos(event.recorded_at),
    severityNumber: severity,
    severityText: status,
    body: {stringValue: JSON.stringify(event)},
    attributes: attributesOf(event, trail),
  }
  if (event.trace_id && /^[0-9a-f]{32}$/.test(event.trace_id)) record.traceId = base64OfHex(event.trace_id)
  if (event.span_id && /^[0-9a-f]{16}$/.test(event.span_id)) record.spanId = base64OfHex(event.span_id)
  return record
}

function attributesOf(event: StoredEvent, trail: string): KeyValue[] {
  const attributes = new Map<string, AnyValue>()
  const metadata = event.metadata as {attributes?: unknown} | undefined
  const spanAttributes = isObject(metadata) && isObject(metadata.attributes) ? metadata.attributes : {}
  for (const [key, value] of Object.entries(spanAttributes)) attributes.set(key, anyValue(value))
  // An event that did not come in over OTLP carries its GenAI fields as labels (docs/otlp.md, Labels).
  for (const [key, value] of Object.entries(event.labels ?? {}))
    if (key.startsWith('gen_ai.') && !attributes.has(key)) attributes.set(key, {stringValue: value})
  if (!attributes.has('gen_ai.agent.name')) attributes.set('gen_ai.agent.name', {stringValue: event.agent_id})
  if (event.session_id && !attributes.has('gen_ai.conversation.id'))
    attributes.set('gen_ai.conversation.id', {stringValue: event.session_id})
  const own: [string, string | number][] = [
    ['trail', trail],
    ['index', event.index],
    ['event_id', event.id],
    ['agent_id', event.agent_id],
    ['sequence', event.sequence],
    ['action_type', event.action_type],
    ['action_name', event.action_name],
    ['action_status', event.action_status],
    ['hash', event.hash],
  ]
  for (const [key, value] of own) attributes.set(`audit_trail.${key}`, anyValue(value))
  return [...attributes].map(([key, value]) => ({key, value}))
}

function keyValue(key: string, value: unknown): KeyValue {
  return {key, value: anyValue(value)}
}

/** A JSON value as an OTLP AnyValue: whole numbers as int_value, others as double_value. */
function anyValue(value: unknown): AnyValue {
  if (typeof value === 'string') return {stringValue: value}
  if (typeof value === 'boolean') return {boolValue: value}
  if (typeof value === 'number') return Number.isSafeInteger(value) ? {intValue: String(value)} : {doubleValue: value}
  if (Array.isArray(value)) return {arrayValue: {values: value.map(anyValue)}}
  if (isObject(value)) return {kvlistValue: {values: Object.entries(value).map(([k, v]) => keyValue(k, v))}}
  return {}
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** An RFC 3339 time as nanoseconds since the epoch, in decimal (fixed64 in the proto3 JSON shape). */
function unixNanos(time: string): string {
  return (BigInt(Date.parse(time)) * 1_000_000n).toString()
}

function base64OfHex(hex: string): string {
  return Buffer.from(hex, 'hex').toString('base64')
}
