/**
 * OTLP log records (opentelemetry-proto `logs/v1/logs.proto`): ExportLogsServiceRequest in its
 * JSON shape -> the records it carries, normalised like spans (span.ts): ids in lower-case hex,
 * exact nanoseconds, attribute values and the body as plain JSON. The same rules as for traces:
 * any malformed part makes the whole request bad data (400), unknown fields are ignored.
 */
import type {Json} from '../types.js'
import {decodeAnyValue, decodeAttributes} from './any-value.js'
import {failField, readEnum, readId, readList, readObject, readString, readUint64, type IdEncoding} from './fields.js'
import {SPAN_ID_BYTES, TRACE_ID_BYTES, type AttributeMap, type DecodedScope} from './span.js'
import {decodeScope, parseOtlpJson, readUint32} from './trace-request.js'

export interface DecodedLogRecord {
  resource: AttributeMap
  scope: DecodedScope
  /** Unix epoch nanoseconds; 0 means unknown. */
  timeUnixNano: bigint
  observedTimeUnixNano: bigint
  /** `SeverityNumber`: 1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-20 ERROR, 21-24 FATAL; 0 unset. */
  severityNumber: number
  severityText: string
  body: Json
  attributes: AttributeMap
  droppedAttributesCount: number
  flags: number
  /** 32 / 16 lower-case hex digits, or '' when the record is outside a span. */
  traceId: string
  spanId: string
  /** The name of the event a record is (`gen_ai.client.inference.operation.details`), or ''. */
  eventName: string
}

/** `SeverityNumber` names without their prefix, by value: UNSPECIFIED, then four of each level. */
export const SEVERITY_NAMES: readonly string[] = [
  'unspecified',
  ...['trace', 'debug', 'info', 'warn', 'error', 'fatal'].flatMap((level) => [
    level,
    `${level}2`,
    `${level}3`,
    `${level}4`,
  ]),
]

/** SEVERITY_NUMBER_ERROR: this and above are errors (the log data model's severity ranges). */
export const SEVERITY_ERROR = 17

function decodeLogRecord(
  value: unknown,
  path: string,
  resource: AttributeMap,
  scope: DecodedScope,
  ids: IdEncoding,
): DecodedLogRecord {
  const record = readObject(value, path) ?? failField(path, 'must be an object')
  return {
    resource,
    scope,
    timeUnixNano: readUint64(record.timeUnixNano, `${path}.timeUnixNano`),
    observedTimeUnixNano: readUint64(record.observedTimeUnixNano, `${path}.observedTimeUnixNano`),
    severityNumber: readEnum(record.severityNumber, `${path}.severityNumber`, SEVERITY_NAMES, 'SEVERITY_NUMBER_'),
    severityText: readString(record.severityText, `${path}.severityText`),
    body: decodeAnyValue(record.body, `${path}.body`),
    attributes: decodeAttributes(record.attributes, `${path}.attributes`),
    droppedAttributesCount: readUint32(record.droppedAttributesCount, `${path}.droppedAttributesCount`),
    flags: readUint32(record.flags, `${path}.flags`),
    traceId: readId(record.traceId, `${path}.traceId`, TRACE_ID_BYTES, ids),
    spanId: readId(record.spanId, `${path}.spanId`, SPAN_ID_BYTES, ids),
    eventName: readString(record.eventName, `${path}.eventName`),
  }
}

/**
 * The records of an ExportLogsServiceRequest in the OTLP/JSON shape, in request order. Throws
 * AuditError('validation_error') naming the first malformed field.
 */
export function normaliseLogsRequest(request: unknown, ids: IdEncoding): DecodedLogRecord[] {
  const root = readObject(request, 'body')
  if (root === undefined) failField('body', 'must be an ExportLogsServiceRequest object')
  const records: DecodedLogRecord[] = []
  readList(root.resourceLogs, 'resourceLogs').forEach((value, r) => {
    const path = `resourceLogs[${r}]`
    const resourceLogs = readObject(value, path) ?? failField(path, 'must be an object')
    const resource = readObject(resourceLogs.resource, `${path}.resource`) ?? {}
    const attributes = decodeAttributes(resource.attributes, `${path}.resource.attributes`)
    readList(resourceLogs.scopeLogs, `${path}.scopeLogs`).forEach((value, s) => {
      const scopePath = `${path}.scopeLogs[${s}]`
      const scopeLogs = readObject(value, scopePath) ?? failField(scopePath, 'must be an object')
      const scope = decodeScope(scopeLogs.scope, `${scopePath}.scope`)
      readList(scopeLogs.logRecords, `${scopePath}.logRecords`).forEach((record, i) => {
        records.push(decodeLogRecord(record, `${scopePath}.logRecords[${i}]`, attributes, scope, ids))
      })
    })
  })
  return records
}

/** An OTLP/JSON logs body; AuditError('invalid_json') when it is not JSON at all. */
export function decodeJsonLogsRequest(body: Uint8Array): DecodedLogRecord[] {
  return normaliseLogsRequest(parseOtlpJson(body, 'resource_logs', 'resourceLogs'), 'hex')
}
