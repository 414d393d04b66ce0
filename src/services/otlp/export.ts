/**
 * POST /v1/traces and /v1/logs end to end, without HTTP: Content-Type and Content-Encoding ->
 * spans or log records -> their agents (core/otlp/agents.ts) -> event bodies -> recorded through
 * the same path as POST /v1/batch -> the Export*ServiceResponse (docs/api.md, "Other";
 * OTLP specification, "OTLP/HTTP Response"). The gRPC service (grpc.ts) records the same way.
 *
 * A span whose event fails validation (or conflicts) is rejected and the others are recorded:
 * the response is then a partial success, which the client does not retry. A request that
 * cannot be read at all throws AuditError (400, 413, 415) and records nothing; a storage
 * failure throws too (503), which the client retries.
 */
import type {AgentScope} from '../../core/auth/agent-scope.js'
import type {IngestService} from '../ingest.js'
import {AgentDirectory} from '../../core/otlp/agents.js'
import {spanToEventBody} from '../../core/otlp/event-body.js'
import {logRecordToEventBody} from '../../core/otlp/log-body.js'
import type {DecodedLogRecord} from '../../core/otlp/log-record.js'
import type {DecodedSpan} from '../../core/otlp/span.js'
import {OTLP_MAX_BODY_BYTES, readOtlpBody} from './body.js'
import {decodeLogsRequest, decodeTraceRequest, parseOtlpContentType, type OtlpEncoding} from './codec.js'
import {encodeLogsResponse, encodeTraceResponse} from './codec.js'

/** What records the events: IngestService.recordElements (src/services/ingest.ts) fits. */
export interface SpanEventRecorder {
  recordElements(bodies: unknown[]): Promise<{results: ReadonlyArray<{status: number; error?: {message: string}}>}>
}

/** What records a bound key's elements: IngestService.recordElements with its `scope` option. */
export type ScopedRecorderSource = SpanEventRecorder & Pick<IngestService, 'recordElements'>

/**
 * The recorder of a key bound to agents (docs/security.md): a span or log record of another agent
 * is refused (403 naming the agent), and reported in `partial_success` like any rejected item.
 */
export function scopedRecorder(ingest: ScopedRecorderSource, scope: AgentScope | undefined): SpanEventRecorder {
  return scope === undefined ? ingest : {recordElements: (bodies) => ingest.recordElements(bodies, {scope})}
}

export interface TraceExportRequest {
  /** The raw request body, as received. */
  body: Uint8Array
  contentType: string | undefined
  contentEncoding: string | undefined
  /** Limit of the body after decompression; defaults to OTLP_MAX_BODY_BYTES (20 MiB). */
  maxBytes?: number
}

interface TraceExportResult {
  /** The ExportTraceServiceResponse to send with status 200. */
  body: Uint8Array | string
  contentType: string
  acceptedSpans: number
  rejectedSpans: number
}

interface LogsExportResult {
  /** The ExportLogsServiceResponse to send with status 200. */
  body: Uint8Array | string
  contentType: string
  acceptedLogRecords: number
  rejectedLogRecords: number
}

/** Rejection reasons quoted in `error_message`; the count is always exact. */
const QUOTED_REASONS = 3

/** What was recorded of one export request: the counts and the partial-success message. */
export interface RecordOutcome {
  accepted: number
  rejected: number
  errorMessage?: string
}

function describeSpan(span: DecodedSpan): string {
  return `span ${span.spanId || '(no span id)'} ${JSON.stringify(span.name)}`
}

function describeRecord(record: DecodedLogRecord, position: number): string {
  return `log record ${position}${record.eventName === '' ? '' : ` ${JSON.stringify(record.eventName)}`}`
}

function describeRejections(rejections: string[], total: number, what: string): string | undefined {
  if (rejections.length === 0) return undefined
  const more = rejections.length > QUOTED_REASONS ? `; and ${rejections.length - QUOTED_REASONS} more` : ''
  return `${rejections.length} of ${total} ${what} rejected: ${rejections.slice(0, QUOTED_REASONS).join('; ')}${more}`
}

/**
 * Records event bodies as one append, however many: a 503 then means that none was recorded, so
 * the exporter's retry duplicates nothing (chunks of 1,000 could fail half way).
 */
async function recordBodies(
  bodies: unknown[],
  recorder: SpanEventRecorder,
  describe: (i: number) => string,
  what: string,
): Promise<RecordOutcome> {
  const rejections: string[] = []
  if (bodies.length > 0) {
    const {results} = await recorder.recordElements(bodies)
    results.forEach((result, i) => {
      if (result.status >= 400) rejections.push(`${describe(i)}: ${result.error?.message ?? 'rejected'}`)
    })
  }
  const errorMessage = describeRejections(rejections, bodies.length, what)
  return {accepted: bodies.length - rejections.length, rejected: rejections.length, errorMessage}
}

/** Records the spans of one export request, each under the agent resolved with the others. */
export function recordSpans(
  spans: DecodedSpan[],
  recorder: SpanEventRecorder,
  agents: AgentDirectory,
): Promise<RecordOutcome> {
  const resolved = agents.resolveSpans(spans)
  const bodies = spans.map((span, i) => spanToEventBody(span, resolved[i]))
  return recordBodies(bodies, recorder, (i) => describeSpan(spans[i]!), 'spans')
}

/** Records the log records of one export request. */
export function recordLogRecords(
  records: DecodedLogRecord[],
  recorder: SpanEventRecorder,
  agents: AgentDirectory,
): Promise<RecordOutcome> {
  const bodies = records.map((record) => logRecordToEventBody(record, agents.resolveRecord(record)))
  return recordBodies(bodies, recorder, (i) => describeRecord(records[i]!, i), 'log records')
}

/**
 * The part of every OTLP/HTTP export: the body read in the request's content type and encoding,
 * its items decoded and recorded. The caller answers in `encoding`.
 */
async function recordExport<T>(
  request: TraceExportRequest,
  decode: (body: Uint8Array, encoding: OtlpEncoding) => T[],
  record: (items: T[]) => Promise<RecordOutcome>,
): Promise<{outcome: RecordOutcome; encoding: OtlpEncoding}> {
  const encoding = parseOtlpContentType(request.contentType)
  const body = await readOtlpBody(request.body, request.contentEncoding, request.maxBytes ?? OTLP_MAX_BODY_BYTES)
  return {outcome: await record(decode(body, encoding)), encoding}
}

/** Handles one OTLP/HTTP trace export; see the module comment for what throws. */
export async function exportTraces(
  request: TraceExportRequest,
  recorder: SpanEventRecorder,
  agents = new AgentDirectory(),
): Promise<TraceExportResult> {
  const decode = (body: Uint8Array, encoding: OtlpEncoding) => decodeTraceRequest(body, encoding).spans
  const {outcome, encoding} = await recordExport(request, decode, (spans) => recordSpans(spans, recorder, agents))
  const response = encodeTraceResponse({rejectedSpans: outcome.rejected, errorMessage: outcome.errorMessage}, encoding)
  return {...response, acceptedSpans: outcome.accepted, rejectedSpans: outcome.rejected}
}

/** Handles one OTLP/HTTP logs export, as exportTraces. */
export async function exportLogs(
  request: TraceExportRequest,
  recorder: SpanEventRecorder,
  agents = new AgentDirectory(),
): Promise<LogsExportResult> {
  const record = (records: DecodedLogRecord[]) => recordLogRecords(records, recorder, agents)
  const {outcome, encoding} = await recordExport(request, decodeLogsRequest, record)
  const rejected = {rejectedLogRecords: outcome.rejected, errorMessage: outcome.errorMessage}
  const response = encodeLogsResponse(rejected, encoding)
  return {...response, acceptedLogRecords: outcome.accepted, rejectedLogRecords: outcome.rejected}
}
