/**
 * POST /v1/traces end to end, without HTTP: Content-Type and Content-Encoding -> spans -> event
 * bodies -> recorded through the same path as POST /v1/batch -> ExportTraceServiceResponse
 * (CONTRACT.md section 4, "Other"; OTLP specification, "OTLP/HTTP Response").
 *
 * A span whose event fails validation (or conflicts) is rejected and the others are recorded:
 * the response is then a partial success, which the client does not retry. A request that
 * cannot be read at all throws AuditError (400, 413, 415) and records nothing; a storage
 * failure throws too (503), which the client retries.
 */
import {spanToEventBody} from '../../core/otlp/event-body.js'
import type {DecodedSpan} from '../../core/otlp/span.js'
import {OTLP_MAX_BODY_BYTES, readOtlpBody} from './body.js'
import {decodeTraceRequest, encodeTraceResponse, parseOtlpContentType} from './codec.js'

/** What records the events: IngestService.recordElements (src/services/ingest.ts) fits. */
export interface SpanEventRecorder {
  recordElements(bodies: unknown[]): Promise<{results: ReadonlyArray<{status: number; error?: {message: string}}>}>
}

export interface TraceExportRequest {
  /** The raw request body, as received. */
  body: Uint8Array
  contentType: string | undefined
  contentEncoding: string | undefined
  /** Limit of the body after decompression; defaults to OTLP_MAX_BODY_BYTES (20 MiB). */
  maxBytes?: number
}

export interface TraceExportResult {
  /** The ExportTraceServiceResponse to send with status 200. */
  body: Uint8Array | string
  contentType: string
  acceptedSpans: number
  rejectedSpans: number
}

/** Rejection reasons quoted in `error_message`; the count is always exact. */
const QUOTED_REASONS = 3

function describeSpan(span: DecodedSpan): string {
  return `span ${span.spanId || '(no span id)'} ${JSON.stringify(span.name)}`
}

function describeRejections(rejections: string[], total: number): string | undefined {
  if (rejections.length === 0) return undefined
  const more = rejections.length > QUOTED_REASONS ? `; and ${rejections.length - QUOTED_REASONS} more` : ''
  return `${rejections.length} of ${total} spans rejected: ${rejections.slice(0, QUOTED_REASONS).join('; ')}${more}`
}

/** Handles one OTLP/HTTP trace export; see the module comment for what throws. */
export async function exportTraces(request: TraceExportRequest, recorder: SpanEventRecorder): Promise<TraceExportResult> {
  const encoding = parseOtlpContentType(request.contentType)
  const body = await readOtlpBody(request.body, request.contentEncoding, request.maxBytes ?? OTLP_MAX_BODY_BYTES)
  const {spans} = decodeTraceRequest(body, encoding)
  const rejections: string[] = []
  // One append for the whole request, however many spans: a 503 then means that none was
  // recorded, so the exporter's retry duplicates nothing (chunks of 1,000 could fail half way).
  if (spans.length > 0) {
    const {results} = await recorder.recordElements(spans.map(spanToEventBody))
    results.forEach((result, i) => {
      if (result.status >= 400) rejections.push(`${describeSpan(spans[i]!)}: ${result.error?.message ?? 'rejected'}`)
    })
  }
  const response = encodeTraceResponse(
    {rejectedSpans: rejections.length, errorMessage: describeRejections(rejections, spans.length)},
    encoding,
  )
  return {...response, acceptedSpans: spans.length - rejections.length, rejectedSpans: rejections.length}
}
