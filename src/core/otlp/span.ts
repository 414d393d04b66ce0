/**
 * The normalised form of an OTLP span (opentelemetry-proto `trace/v1/trace.proto`), the same
 * whichever encoding it arrived in (OTLP specification, "OTLP/HTTP": binary or JSON Protobuf).
 * Ids are lower-case hex, times are exact nanoseconds, attribute values are plain JSON.
 */
import type {Json} from '../types.js'

/** Attributes (`repeated KeyValue`) as a JSON object: key -> decoded AnyValue. */
export type AttributeMap = {[key: string]: Json}

/** `InstrumentationScope` of common.proto; an absent scope is the empty one. */
export interface DecodedScope {
  name: string
  version: string
  attributes: AttributeMap
}

/** `Span.Event`: a time-stamped annotation, such as a recorded exception. */
export interface DecodedSpanEvent {
  timeUnixNano: bigint
  name: string
  attributes: AttributeMap
}

/** `Span.Link`: a pointer to another span. */
export interface DecodedSpanLink {
  traceId: string
  spanId: string
  traceState: string
  attributes: AttributeMap
}

export interface DecodedSpan {
  /** Attributes of the span's `Resource` (shared, not copied, by the spans of one ResourceSpans). */
  resource: AttributeMap
  scope: DecodedScope
  /** 32 lower-case hex digits, or '' when the sender left it empty. */
  traceId: string
  /** 16 lower-case hex digits, or ''. */
  spanId: string
  /** 16 lower-case hex digits, or '' for a root span. */
  parentSpanId: string
  traceState: string
  name: string
  /** `Span.SpanKind` value; unknown values are kept as sent (OTLP: unmarshal unknown enums). */
  kind: number
  /** Unix epoch nanoseconds (`fixed64`); 0 means unknown. */
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
  attributes: AttributeMap
  events: DecodedSpanEvent[]
  links: DecodedSpanLink[]
  /** `Status.code` (`StatusCode` value) and `Status.message`. */
  status: {code: number; message: string}
  /** What the sender's SDK dropped (its limits): `dropped_attributes_count` and the others. */
  dropped: {attributes: number; events: number; links: number}
  /** `Span.flags`: W3C trace flags in the low byte, and whether the parent is remote (bits 8-9). */
  flags: number
}

/** The spans of one ExportTraceServiceRequest in request order. */
export interface DecodedSpanBatch {
  spans: DecodedSpan[]
}

/** `Span.SpanKind` names without their prefix, by value (trace.proto). */
export const SPAN_KINDS: readonly string[] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer']

/** `Status.StatusCode` names without their prefix, by value (trace.proto). */
export const STATUS_CODES: readonly string[] = ['unset', 'ok', 'error']

export const STATUS_CODE_ERROR = 2

/** Byte lengths of the ids (trace.proto: trace_id is 16 bytes, span_id 8). */
export const TRACE_ID_BYTES = 16
export const SPAN_ID_BYTES = 8
