/**
 * One OTLP span -> the body of one audit event (CONTRACT.md section 4, POST /v1/traces), shaped
 * like what a client sends to POST /v1/events so that it goes through the same validation
 * (CONTRACT.md 2.1). The mapping and the `metadata` layout are documented in docs/otlp.md.
 *
 * The GenAI attribute names are those of the OpenTelemetry semantic conventions for generative AI
 * (`gen_ai.agent.name`, `gen_ai.agent.id`, `gen_ai.operation.name`, `gen_ai.tool.name`).
 */
import type {Json} from '../types.js'
import {CONTROL_CHARACTERS} from '../event/text.js'
import {SPAN_KINDS, STATUS_CODE_ERROR, STATUS_CODES, type AttributeMap, type DecodedSpan} from './span.js'

/** `gen_ai.operation.name` -> `action_type`; any other operation (or none) is `SPAN`. */
export const ACTION_TYPES: Readonly<Record<string, string>> = {
  execute_tool: 'TOOL_CALL',
  chat: 'LLM_CALL',
  text_completion: 'LLM_CALL',
  generate_content: 'LLM_CALL',
  invoke_agent: 'AGENT_ACTION',
  create_agent: 'AGENT_ACTION',
}

export const UNKNOWN_AGENT = 'unknown_service'
export const UNNAMED_SPAN = 'unnamed_span'

/** Limits of CONTRACT.md 2.1, in code points as the validator counts them. */
const MAX_AGENT_ID = 256
const MAX_ACTION_NAME = 256
const MAX_ERROR = 8192
const MAX_LABEL_VALUE = 1024

/** The first `max` code points of a well-formed string (never half a surrogate pair). */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text
  let end = 0
  for (let count = 0; count < max && end < text.length; count++) {
    end += text.codePointAt(end)! > 0xffff ? 2 : 1
  }
  return text.slice(0, end)
}

/** Text for `agent_id` / `action_name`: control characters shown as U+FFFD, then truncated. */
function toNameText(text: string, max: number): string {
  return truncate(text.replace(CONTROL_CHARACTERS, '\uFFFD'), max)
}

function actionTypeOf(operation: Json | undefined): string {
  return typeof operation === 'string' && Object.hasOwn(ACTION_TYPES, operation) ? ACTION_TYPES[operation] : 'SPAN'
}

/** The first candidate that is a non-empty string. */
function firstText(...candidates: Array<Json | undefined>): string | undefined {
  return candidates.find((value): value is string => typeof value === 'string' && value.length > 0)
}

function nanosToIso(nanos: bigint): string {
  // Nanoseconds truncated to whole milliseconds, the precision of an event timestamp.
  return new Date(Number(nanos / 1_000_000n)).toISOString()
}

/** `error` of an ERROR span: its status message, else the message of its first exception event. */
function errorText(span: DecodedSpan): string | undefined {
  if (span.status.code !== STATUS_CODE_ERROR) return undefined
  const exception = span.events.find((event) => event.name === 'exception')
  const text = firstText(span.status.message, exception?.attributes['exception.message'])
  return text === undefined ? undefined : truncate(text, MAX_ERROR)
}

function labelsOf(span: DecodedSpan): Record<string, string> | undefined {
  const labels: Record<string, string> = {}
  const scopeName = firstText(span.scope.name)
  const serviceName = firstText(span.resource['service.name'])
  if (scopeName !== undefined) labels['otel.scope.name'] = truncate(scopeName, MAX_LABEL_VALUE)
  if (serviceName !== undefined) labels['service.name'] = truncate(serviceName, MAX_LABEL_VALUE)
  return Object.keys(labels).length > 0 ? labels : undefined
}

/** Everything of the span that has no event field of its own, losslessly (docs/otlp.md). */
function metadataOf(span: DecodedSpan): {[key: string]: Json} {
  const metadata: {[key: string]: Json} = {
    span_name: span.name,
    span_kind: SPAN_KINDS[span.kind] ?? span.kind,
    status_code: STATUS_CODES[span.status.code] ?? span.status.code,
    start_time_unix_nano: span.startTimeUnixNano.toString(),
    end_time_unix_nano: span.endTimeUnixNano.toString(),
    attributes: span.attributes,
    resource: span.resource,
    scope: {name: span.scope.name, version: span.scope.version, attributes: span.scope.attributes},
  }
  if (span.status.message !== '') metadata.status_message = span.status.message
  if (span.traceState !== '') metadata.trace_state = span.traceState
  if (span.flags !== 0) metadata.flags = span.flags
  // What the sender's SDK left out is evidence too: "N attributes were dropped".
  if (span.dropped.attributes > 0) metadata.dropped_attributes_count = span.dropped.attributes
  if (span.dropped.events > 0) metadata.dropped_events_count = span.dropped.events
  if (span.dropped.links > 0) metadata.dropped_links_count = span.dropped.links
  if (span.events.length > 0) {
    metadata.events = span.events.map((event) => ({
      name: event.name,
      time_unix_nano: event.timeUnixNano.toString(),
      attributes: event.attributes,
    }))
  }
  if (span.links.length > 0) {
    metadata.links = span.links.map((link) => {
      const json: AttributeMap = {trace_id: link.traceId, span_id: link.spanId, attributes: link.attributes}
      if (link.traceState !== '') json.trace_state = link.traceState
      return json
    })
  }
  return metadata
}

/**
 * The event body for one span. Fields that the span does not carry are left out, so that the
 * validator applies its defaults: no start time -> time of receipt, no ids -> no `trace_id` etc.
 * `duration_ms` only when both times are known and the end is not before the start.
 */
export function spanToEventBody(span: DecodedSpan): Record<string, unknown> {
  const attributes = span.attributes
  const agent = firstText(attributes['gen_ai.agent.name'], attributes['gen_ai.agent.id'], span.resource['service.name'])
  const actionName = firstText(attributes['gen_ai.tool.name'], span.name)
  const body: Record<string, unknown> = {
    agent_id: toNameText(agent ?? UNKNOWN_AGENT, MAX_AGENT_ID),
    action_type: actionTypeOf(attributes['gen_ai.operation.name']),
    action_name: toNameText(actionName ?? UNNAMED_SPAN, MAX_ACTION_NAME),
    action_status: span.status.code === STATUS_CODE_ERROR ? 'error' : 'success',
  }
  const start = span.startTimeUnixNano
  const end = span.endTimeUnixNano
  if (start > 0n) body.timestamp = nanosToIso(start)
  const labels = labelsOf(span)
  if (labels) body.labels = labels
  if (span.traceId !== '') body.trace_id = span.traceId
  if (span.spanId !== '') body.span_id = span.spanId
  // An all-zero span id is no span id (W3C Trace Context): such a parent means a root span.
  if (span.parentSpanId !== '' && !/^0+$/.test(span.parentSpanId)) body.parent_id = span.parentSpanId
  body.metadata = metadataOf(span)
  const error = errorText(span)
  if (error !== undefined) body.error = error
  if (start > 0n && end >= start) body.duration_ms = Number(end - start) / 1e6
  return body
}
