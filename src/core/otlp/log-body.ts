/**
 * One OTLP log record -> the body of one audit event (docs/api.md, POST /v1/logs),
 * validated like any event. GenAI events (`gen_ai.client.inference.operation.details` and the
 * other `gen_ai.*` event names) are `MESSAGE`s; other records are `LOG`s. The table is in
 * docs/otlp.md.
 */
import type {Json} from '../types.js'
import type {ResolvedAgent} from './agents.js'
import {addContent, labelsOf} from './event-body.js'
import {firstText} from './genai.js'
import {MAX_ACTION_NAME, MAX_AGENT_ID, MAX_ERROR, nanosToIso, toLabelText, toNameText, truncate} from './limits.js'
import {SEVERITY_ERROR, SEVERITY_NAMES, type DecodedLogRecord} from './log-record.js'

const UNNAMED_LOG = 'log'

/** The record's event name: the field, else the `event.name` attribute senders used before it. */
function eventNameOf(record: DecodedLogRecord): string | undefined {
  return firstText(record.eventName, record.attributes['event.name'])
}

/** `error` of an ERROR or FATAL record: its `exception.message`, else its body when it is text. */
function errorText(record: DecodedLogRecord): string | undefined {
  if (record.severityNumber < SEVERITY_ERROR) return undefined
  const text = firstText(record.attributes['exception.message'], record.body)
  return text === undefined ? undefined : truncate(text, MAX_ERROR)
}

function metadataOf(record: DecodedLogRecord): {[key: string]: Json} {
  const metadata: {[key: string]: Json} = {
    log_record: true,
    time_unix_nano: record.timeUnixNano.toString(),
    observed_time_unix_nano: record.observedTimeUnixNano.toString(),
    severity_number: record.severityNumber,
    body: record.body,
    attributes: record.attributes,
    resource: record.resource,
    scope: {name: record.scope.name, version: record.scope.version, attributes: record.scope.attributes},
  }
  if (record.eventName !== '') metadata.event_name = record.eventName
  if (record.severityText !== '') metadata.severity_text = record.severityText
  if (record.flags !== 0) metadata.flags = record.flags
  if (record.droppedAttributesCount > 0) metadata.dropped_attributes_count = record.droppedAttributesCount
  return metadata
}

/** The event body for one log record whose agent is resolved (agents.ts). */
export function logRecordToEventBody(record: DecodedLogRecord, agent: ResolvedAgent): Record<string, unknown> {
  const eventName = eventNameOf(record)
  const body: Record<string, unknown> = {
    agent_id: toNameText(agent.agent, MAX_AGENT_ID),
    action_type: eventName?.startsWith('gen_ai.') ? 'MESSAGE' : 'LOG',
    action_name: toNameText(eventName ?? UNNAMED_LOG, MAX_ACTION_NAME),
    action_status: record.severityNumber >= SEVERITY_ERROR ? 'error' : 'success',
  }
  // The time of the event, else when the SDK saw it (the log data model's observed time).
  const time = record.timeUnixNano > 0n ? record.timeUnixNano : record.observedTimeUnixNano
  if (time > 0n) body.timestamp = nanosToIso(time)
  const labels = labelsOf(record.attributes, record.resource, record.scope, agent)
  const severityName = record.severityNumber > 0 ? SEVERITY_NAMES[record.severityNumber] : undefined
  const severity = firstText(record.severityText, severityName)
  if (severity !== undefined) labels['log.severity'] = toLabelText(severity)
  body.labels = labels
  if (record.traceId !== '') body.trace_id = record.traceId
  if (record.spanId !== '' && !/^0+$/.test(record.spanId)) body.span_id = record.spanId
  addContent(body, record.attributes)
  body.metadata = metadataOf(record)
  const error = errorText(record)
  if (error !== undefined) body.error = error
  return body
}
