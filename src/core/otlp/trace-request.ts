/**
 * ExportTraceServiceRequest (opentelemetry-proto `collector/trace/v1/trace_service.proto`) in its
 * JSON shape -> the spans it carries, normalised (span.ts). OTLP/JSON bodies are parsed here; the
 * binary encoding reaches `normaliseTraceRequest` through src/services/otlp/protobuf.ts.
 *
 * Any malformed part makes the whole request bad data (OTLP specification, "Bad Data": HTTP 400,
 * not retried), as in the OpenTelemetry Collector. Unknown fields are ignored, as the OTLP/JSON
 * rules require ("receivers MUST ignore message fields with unknown names").
 */
import {AuditError} from '../errors.js'
import {DuplicateMemberError, parseUniqueJson} from '../json/duplicate-members.js'
import {decodeAttributes} from './any-value.js'
import {failField, readEnum, readId, readList, readObject, readString, readUint64, type IdEncoding} from './fields.js'
import {
  SPAN_ID_BYTES,
  SPAN_KINDS,
  STATUS_CODES,
  TRACE_ID_BYTES,
  type AttributeMap,
  type DecodedScope,
  type DecodedSpan,
  type DecodedSpanBatch,
  type DecodedSpanEvent,
  type DecodedSpanLink,
} from './span.js'

type Message = Record<string, unknown>

interface SpanContext {
  resource: AttributeMap
  scope: DecodedScope
  ids: IdEncoding
}

/** `InstrumentationScope`; an absent scope is the empty one. */
export function decodeScope(value: unknown, path: string): DecodedScope {
  const scope = readObject(value, path) ?? {}
  return {
    name: readString(scope.name, `${path}.name`),
    version: readString(scope.version, `${path}.version`),
    attributes: decodeAttributes(scope.attributes, `${path}.attributes`),
  }
}

function decodeEvent(value: unknown, path: string): DecodedSpanEvent {
  const event = readObject(value, path) ?? failField(path, 'must be an object')
  return {
    timeUnixNano: readUint64(event.timeUnixNano, `${path}.timeUnixNano`),
    name: readString(event.name, `${path}.name`),
    attributes: decodeAttributes(event.attributes, `${path}.attributes`),
  }
}

function decodeLink(value: unknown, path: string, ids: IdEncoding): DecodedSpanLink {
  const link = readObject(value, path) ?? failField(path, 'must be an object')
  return {
    traceId: readId(link.traceId, `${path}.traceId`, TRACE_ID_BYTES, ids),
    spanId: readId(link.spanId, `${path}.spanId`, SPAN_ID_BYTES, ids),
    traceState: readString(link.traceState, `${path}.traceState`),
    attributes: decodeAttributes(link.attributes, `${path}.attributes`),
  }
}

function decodeSpan(value: unknown, path: string, context: SpanContext): DecodedSpan {
  const span: Message = readObject(value, path) ?? failField(path, 'must be an object')
  const status = readObject(span.status, `${path}.status`) ?? {}
  const events = readList(span.events, `${path}.events`)
  const links = readList(span.links, `${path}.links`)
  return {
    resource: context.resource,
    scope: context.scope,
    traceId: readId(span.traceId, `${path}.traceId`, TRACE_ID_BYTES, context.ids),
    spanId: readId(span.spanId, `${path}.spanId`, SPAN_ID_BYTES, context.ids),
    parentSpanId: readId(span.parentSpanId, `${path}.parentSpanId`, SPAN_ID_BYTES, context.ids),
    traceState: readString(span.traceState, `${path}.traceState`),
    name: readString(span.name, `${path}.name`),
    kind: readEnum(span.kind, `${path}.kind`, SPAN_KINDS, 'SPAN_KIND_'),
    startTimeUnixNano: readUint64(span.startTimeUnixNano, `${path}.startTimeUnixNano`),
    endTimeUnixNano: readUint64(span.endTimeUnixNano, `${path}.endTimeUnixNano`),
    attributes: decodeAttributes(span.attributes, `${path}.attributes`),
    events: events.map((event, i) => decodeEvent(event, `${path}.events[${i}]`)),
    links: links.map((link, i) => decodeLink(link, `${path}.links[${i}]`, context.ids)),
    status: {
      code: readEnum(status.code, `${path}.status.code`, STATUS_CODES, 'STATUS_CODE_'),
      message: readString(status.message, `${path}.status.message`),
    },
    dropped: {
      attributes: readUint32(span.droppedAttributesCount, `${path}.droppedAttributesCount`),
      events: readUint32(span.droppedEventsCount, `${path}.droppedEventsCount`),
      links: readUint32(span.droppedLinksCount, `${path}.droppedLinksCount`),
    },
    flags: readUint32(span.flags, `${path}.flags`),
  }
}

/** A `uint32` / `fixed32` field (a JSON number, or a decimal string as the 64-bit ones may be). */
export function readUint32(value: unknown, path: string): number {
  const read = readUint64(value, path)
  if (read > 0xffffffffn) failField(path, 'must be an unsigned 32-bit integer')
  return Number(read)
}

/**
 * The spans of an ExportTraceServiceRequest given in the OTLP/JSON shape, in request order
 * (resourceSpans, then scopeSpans, then spans). `ids` tells how trace and span ids are encoded.
 * Throws AuditError('validation_error') naming the first malformed field.
 */
export function normaliseTraceRequest(request: unknown, ids: IdEncoding): DecodedSpanBatch {
  const root = readObject(request, 'body')
  if (root === undefined) failField('body', 'must be an ExportTraceServiceRequest object')
  const spans: DecodedSpan[] = []
  readList(root.resourceSpans, 'resourceSpans').forEach((value, r) => {
    const path = `resourceSpans[${r}]`
    const resourceSpans = readObject(value, path) ?? failField(path, 'must be an object')
    const resource = readObject(resourceSpans.resource, `${path}.resource`) ?? {}
    const attributes = decodeAttributes(resource.attributes, `${path}.resource.attributes`)
    readList(resourceSpans.scopeSpans, `${path}.scopeSpans`).forEach((value, s) => {
      const scopePath = `${path}.scopeSpans[${s}]`
      const scopeSpans = readObject(value, scopePath) ?? failField(scopePath, 'must be an object')
      const context = {resource: attributes, scope: decodeScope(scopeSpans.scope, `${scopePath}.scope`), ids}
      readList(scopeSpans.spans, `${scopePath}.spans`).forEach((span, i) => {
        spans.push(decodeSpan(span, `${scopePath}.spans[${i}]`, context))
      })
    })
  })
  return {spans}
}

const UTF8 = new TextDecoder('utf-8', {fatal: true})

/**
 * An OTLP/JSON body (`Content-Type: application/json`): UTF-8 JSON text of an
 * ExportTraceServiceRequest. Throws AuditError('invalid_json') when it is not JSON at all.
 */
export function decodeJsonTraceRequest(body: Uint8Array): DecodedSpanBatch {
  return normaliseTraceRequest(parseOtlpJson(body, 'resource_spans', 'resourceSpans'), 'hex')
}

/**
 * The JSON text of an OTLP export request, its field names in lowerCamelCase whichever way the
 * sender spelled the root (`protoRoot`, `jsonRoot`: e.g. `resource_logs`, `resourceLogs`).
 * Throws AuditError('invalid_json') when it is not JSON at all, or gives a field twice (proto3
 * JSON has no rule for which one counts).
 */
export function parseOtlpJson(body: Uint8Array, protoRoot: string, jsonRoot: string): unknown {
  let parsed: unknown
  try {
    parsed = parseUniqueJson(UTF8.decode(body), 'the OTLP/JSON body')
  } catch (error) {
    if (error instanceof DuplicateMemberError) throw new AuditError('invalid_json', error.message, {cause: error})
    const reason = error instanceof SyntaxError ? error.message : 'it is not valid UTF-8'
    throw new AuditError('invalid_json', `the OTLP/JSON body is not valid JSON: ${reason}`, {cause: error})
  }
  return usesProtoFieldNames(parsed, protoRoot, jsonRoot) ? toJsonFieldNames(parsed) : parsed
}

/**
 * The proto3 JSON mapping lets a parser accept the proto field names (`resource_spans`) beside
 * the lowerCamelCase JSON names, and the Collector does; OTLP/JSON senders should use the latter.
 * A body whose root is spelled the proto way would otherwise be a request without spans, answered
 * 200 with nothing recorded. (OTLP/JSON has no maps: every object key is a field name.)
 */
function usesProtoFieldNames(parsed: unknown, protoRoot: string, jsonRoot: string): parsed is Record<string, unknown> {
  return (
    typeof parsed === 'object' &&
    parsed !== null &&
    Object.hasOwn(parsed, protoRoot) &&
    !Object.hasOwn(parsed, jsonRoot)
  )
}

function toJsonFieldNames(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toJsonFieldNames)
  if (typeof value !== 'object' || value === null) return value
  const renamed: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value)) {
    const name = key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
    // Defined, not assigned: a member named `__proto__` stays a member.
    Object.defineProperty(renamed, name, {
      value: toJsonFieldNames(member),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return renamed
}
