/**
 * OTLP binary Protobuf encoding (OTLP specification, "Binary Protobuf Encoding") through
 * protobufjs, the only module that imports it. The request is decoded with the schema of
 * proto-definitions.ts, then brought to the OTLP/JSON shape (`toObject`) so that one set of rules in
 * src/core/otlp checks both encodings.
 */
import protobuf from 'protobufjs'
import {AuditError} from '../../core/errors.js'
import {normaliseLogsRequest, type DecodedLogRecord} from '../../core/otlp/log-record.js'
import type {DecodedSpanBatch} from '../../core/otlp/span.js'
import {normaliseTraceRequest} from '../../core/otlp/trace-request.js'
import {
  COMMON_PROTO,
  LOGS_PROTO,
  LOGS_SERVICE_PROTO,
  RESOURCE_PROTO,
  TRACE_PROTO,
  TRACE_SERVICE_PROTO,
} from './proto-definitions.js'

function buildRoot(): protobuf.Root {
  const root = new protobuf.Root()
  // `parse` adds each file's types to the same root; `resolveAll` then links the cross-package
  // references, which is what the files' `import` lines do for protoc.
  const sources = [COMMON_PROTO, RESOURCE_PROTO, TRACE_PROTO, TRACE_SERVICE_PROTO, LOGS_PROTO, LOGS_SERVICE_PROTO]
  for (const source of sources) {
    protobuf.parse(source, root)
  }
  root.resolveAll()
  return root
}

const root = buildRoot()
const REQUEST = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest')
const RESPONSE = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse')
const LOGS_REQUEST = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest')
const LOGS_RESPONSE = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse')

/**
 * The proto3 JSON shape: camelCase names (protobufjs' default), 64-bit integers as decimal
 * strings (exact, unlike numbers), enums as integers, bytes as base64, NaN and the infinities as
 * strings; fields left at their default are absent, as in OTLP/JSON.
 */
const TO_JSON_SHAPE: protobuf.IConversionOptions = {longs: String, enums: Number, bytes: String, json: true}

/**
 * A binary ExportTraceServiceRequest. Throws AuditError('validation_error') when the bytes are
 * not one (truncated, wrong wire types, nested deeper than protobufjs' recursion limit of 100).
 */
export function decodeProtobufTraceRequest(body: Uint8Array): DecodedSpanBatch {
  return normaliseTraceRequest(toJsonShape(REQUEST, body, 'ExportTraceServiceRequest'), 'base64')
}

/** A binary ExportLogsServiceRequest; AuditError('validation_error') when the bytes are not one. */
export function decodeProtobufLogsRequest(body: Uint8Array): DecodedLogRecord[] {
  return normaliseLogsRequest(toJsonShape(LOGS_REQUEST, body, 'ExportLogsServiceRequest'), 'base64')
}

function toJsonShape(type: protobuf.Type, body: Uint8Array, name: string): Record<string, unknown> {
  try {
    return type.toObject(type.decode(body), TO_JSON_SHAPE)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new AuditError('validation_error', `the body is not a valid protobuf ${name}: ${reason}`, {cause: error})
  }
}

/**
 * A binary ExportTraceServiceRequest from its proto3 JSON shape with base64 ids, as an SDK would
 * send it (for benchmarks and tools; the service only decodes requests).
 */
export function encodeProtobufTraceRequest(request: Record<string, unknown>): Uint8Array {
  return REQUEST.encode(REQUEST.fromObject(request)).finish()
}

/** A binary ExportTraceServiceResponse; `partial_success` only when given. */
export function encodeProtobufTraceResponse(partialSuccess?: {
  rejectedSpans: number
  errorMessage: string
}): Uint8Array {
  return RESPONSE.encode(RESPONSE.fromObject(partialSuccess ? {partialSuccess} : {})).finish()
}

/** A binary ExportTraceServiceResponse read back, in the OTLP/JSON shape (for tests and tools). */
export function decodeProtobufTraceResponse(body: Uint8Array): Record<string, unknown> {
  return RESPONSE.toObject(RESPONSE.decode(body), TO_JSON_SHAPE)
}

/** A binary ExportLogsServiceResponse; `partial_success` only when given. */
export function encodeProtobufLogsResponse(partialSuccess?: {
  rejectedLogRecords: number
  errorMessage: string
}): Uint8Array {
  return LOGS_RESPONSE.encode(LOGS_RESPONSE.fromObject(partialSuccess ? {partialSuccess} : {})).finish()
}

/** A binary ExportLogsServiceRequest from its proto3 JSON shape with base64 ids (docs/forwarding.md, OTLP). */
export function encodeProtobufLogsRequest(request: Record<string, unknown>): Uint8Array {
  return LOGS_REQUEST.encode(LOGS_REQUEST.fromObject(request)).finish()
}

/** A binary ExportLogsServiceRequest read back as it was sent, in the OTLP/JSON shape (for tests and tools). */
export function decodeProtobufLogsExport(body: Uint8Array): Record<string, unknown> {
  return toJsonShape(LOGS_REQUEST, body, 'ExportLogsServiceRequest')
}
