/**
 * The two OTLP/HTTP encodings of the trace and log signals (OTLP specification, "OTLP/HTTP"): binary
 * Protobuf (`application/x-protobuf`) and JSON Protobuf (`application/json`). A response is
 * written in the encoding of its request ("The server MUST use the same Content-Type in the
 * response as it received in the request").
 */
import {AuditError} from '../../core/errors.js'
import type {DecodedSpanBatch} from '../../core/otlp/span.js'
import {decodeJsonLogsRequest, type DecodedLogRecord} from '../../core/otlp/log-record.js'
import {decodeJsonTraceRequest} from '../../core/otlp/trace-request.js'
import {decodeProtobufLogsRequest, decodeProtobufTraceRequest} from './protobuf.js'
import {encodeProtobufLogsResponse, encodeProtobufTraceResponse} from './protobuf.js'

export type OtlpEncoding = 'json' | 'protobuf'

const OTLP_CONTENT_TYPES: Readonly<Record<OtlpEncoding, string>> = {
  json: 'application/json',
  protobuf: 'application/x-protobuf',
}

/**
 * The encoding named by a request's Content-Type (parameters such as `charset` ignored).
 * `application/protobuf`, the media type IANA registered later, is read as binary Protobuf too.
 * Anything else: AuditError('unsupported_media_type').
 */
export function parseOtlpContentType(contentType: string | undefined): OtlpEncoding {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  if (mediaType === 'application/json') return 'json'
  if (mediaType === 'application/x-protobuf' || mediaType === 'application/protobuf') return 'protobuf'
  throw new AuditError(
    'unsupported_media_type',
    `OTLP/HTTP bodies must be application/x-protobuf or application/json, not ` +
      `${contentType ? `"${contentType}"` : 'untyped'}`,
  )
}

/**
 * The spans of an ExportTraceServiceRequest body (already inflated, see body.ts). Throws
 * AuditError: `invalid_json` when a JSON body is not JSON, `validation_error` naming the
 * field when the message is malformed (OTLP "Bad Data": 400, the client does not retry).
 */
export function decodeTraceRequest(body: Uint8Array, contentType: OtlpEncoding): DecodedSpanBatch {
  return contentType === 'json' ? decodeJsonTraceRequest(body) : decodeProtobufTraceRequest(body)
}

/**
 * An ExportTraceServiceResponse in the request's encoding. OTLP "Full Success": `partial_success`
 * unset; "Partial Success": set, with `rejected_spans` and an English `error_message`. A message
 * with nothing rejected is sent as a warning (`rejected_spans` 0), which the spec allows.
 */
export function encodeTraceResponse(
  result: {rejectedSpans: number; errorMessage?: string},
  contentType: OtlpEncoding,
): {body: Uint8Array | string; contentType: string} {
  const errorMessage = result.errorMessage ?? ''
  const partial =
    result.rejectedSpans > 0 || errorMessage !== '' ? {rejectedSpans: result.rejectedSpans, errorMessage} : undefined
  if (contentType === 'protobuf') {
    return {body: encodeProtobufTraceResponse(partial), contentType: OTLP_CONTENT_TYPES.protobuf}
  }
  // proto3 JSON mapping: int64 is written as a decimal string.
  const json = partial ? {partialSuccess: {rejectedSpans: String(partial.rejectedSpans), errorMessage}} : {}
  return {body: JSON.stringify(json), contentType: OTLP_CONTENT_TYPES.json}
}

/** The log records of an ExportLogsServiceRequest body; throws as decodeTraceRequest does. */
export function decodeLogsRequest(body: Uint8Array, contentType: OtlpEncoding): DecodedLogRecord[] {
  return contentType === 'json' ? decodeJsonLogsRequest(body) : decodeProtobufLogsRequest(body)
}

/** An ExportLogsServiceResponse in the request's encoding, as encodeTraceResponse. */
export function encodeLogsResponse(
  result: {rejectedLogRecords: number; errorMessage?: string},
  contentType: OtlpEncoding,
): {body: Uint8Array | string; contentType: string} {
  const errorMessage = result.errorMessage ?? ''
  const rejected = result.rejectedLogRecords
  const partial = rejected > 0 || errorMessage !== '' ? {rejectedLogRecords: rejected, errorMessage} : undefined
  if (contentType === 'protobuf') {
    return {body: encodeProtobufLogsResponse(partial), contentType: OTLP_CONTENT_TYPES.protobuf}
  }
  const json = partial ? {partialSuccess: {rejectedLogRecords: String(partial.rejectedLogRecords), errorMessage}} : {}
  return {body: JSON.stringify(json), contentType: OTLP_CONTENT_TYPES.json}
}
