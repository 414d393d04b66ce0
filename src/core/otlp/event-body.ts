/**
 * One OTLP span -> the body of one audit event (docs/api.md, POST /v1/traces), shaped
 * like what a client sends to POST /v1/events so that it goes through the same validation
 * (docs/api.md). The mapping and the `metadata` layout are documented in docs/otlp.md.
 *
 * The GenAI attribute names are those of the OpenTelemetry semantic conventions for generative AI
 * (`gen_ai.agent.name`, `gen_ai.agent.id`, `gen_ai.operation.name`, `gen_ai.tool.name`).
 */
import type {Json} from '../types.js'
import {AgentDirectory, type ResolvedAgent} from './agents.js'
import {actionTypeOf, contentFields, firstText, genAiLabels, operationOf} from './genai.js'
import {MAX_ACTION_NAME, MAX_AGENT_ID, MAX_ERROR, MAX_SESSION_ID} from './limits.js'
import {nanosToIso, toLabelText, toNameText, truncate} from './limits.js'
import {SPAN_KINDS, STATUS_CODE_ERROR, STATUS_CODES} from './span.js'
import type {AttributeMap, DecodedScope, DecodedSpan} from './span.js'

export {ACTION_TYPES} from './genai.js'
export {UNKNOWN_AGENT} from './agents.js'

const UNNAMED_SPAN = 'unnamed_span'

/** `error` of an ERROR span: its status message, else the message of its first exception event. */
function errorText(span: DecodedSpan): string | undefined {
  if (span.status.code !== STATUS_CODE_ERROR) return undefined
  const exception = span.events.find((event) => event.name === 'exception')
  const text = firstText(span.status.message, exception?.attributes['exception.message'])
  return text === undefined ? undefined : truncate(text, MAX_ERROR)
}

/**
 * Labels, which filters (`label.<key>=`) and policies match: where the record came from, the named
 * GenAI fields (genai.ts) and how its agent was found (`atrail.agent_source`).
 */
export function labelsOf(
  attributes: AttributeMap,
  resource: AttributeMap,
  scope: DecodedScope,
  agent: ResolvedAgent,
): Record<string, string> {
  const labels: Record<string, string> = {}
  const scopeName = firstText(scope.name)
  const serviceName = firstText(resource['service.name'])
  if (scopeName !== undefined) labels['otel.scope.name'] = toLabelText(scopeName)
  if (serviceName !== undefined) labels['service.name'] = toLabelText(serviceName)
  Object.assign(labels, genAiLabels(attributes, toLabelText))
  labels['atrail.agent_source'] = agent.source
  return labels
}

/** `session_id`, `input` and `output` from the GenAI attributes, each only when present. */
export function addContent(body: Record<string, unknown>, attributes: AttributeMap): void {
  const {input, output, session} = contentFields(attributes)
  if (session !== undefined) body.session_id = truncate(session, MAX_SESSION_ID)
  if (input !== undefined) body.input = input
  if (output !== undefined) body.output = output
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
 * The event body for one span, whose agent was resolved with the rest of its request
 * (agents.ts; alone, without `agent`). Fields that the span does not carry are left out, so that
 * the validator applies its defaults: no start time -> time of receipt, no ids -> no `trace_id`.
 * `duration_ms` only when both times are known and the end is not before the start.
 */
export function spanToEventBody(
  span: DecodedSpan,
  agent: ResolvedAgent = new AgentDirectory(1).resolveSpans([span])[0]!,
): Record<string, unknown> {
  const attributes = span.attributes
  const actionName = firstText(attributes['gen_ai.tool.name'], span.name)
  const body: Record<string, unknown> = {
    agent_id: toNameText(agent.agent, MAX_AGENT_ID),
    action_type: actionTypeOf(operationOf(attributes), 'SPAN'),
    action_name: toNameText(actionName ?? UNNAMED_SPAN, MAX_ACTION_NAME),
    action_status: span.status.code === STATUS_CODE_ERROR ? 'error' : 'success',
  }
  const start = span.startTimeUnixNano
  const end = span.endTimeUnixNano
  if (start > 0n) body.timestamp = nanosToIso(start)
  body.labels = labelsOf(attributes, span.resource, span.scope, agent)
  if (span.traceId !== '') body.trace_id = span.traceId
  if (span.spanId !== '') body.span_id = span.spanId
  // An all-zero span id is no span id (W3C Trace Context): such a parent means a root span.
  if (span.parentSpanId !== '' && !/^0+$/.test(span.parentSpanId)) body.parent_id = span.parentSpanId
  addContent(body, attributes)
  body.metadata = metadataOf(span)
  const error = errorText(span)
  if (error !== undefined) body.error = error
  if (start > 0n && end >= start) body.duration_ms = Number(end - start) / 1e6
  return body
}
