/**
 * What the real OpenTelemetry JS SDK sends, decoded and mapped: both OTLP/HTTP encodings, with
 * and without gzip, checked field by field against the SDK's own record of the spans.
 */
import {expect} from 'chai'
import {gunzipSync} from 'node:zlib'
import {JsonTraceSerializer, ProtobufTraceSerializer} from '@opentelemetry/otlp-transformer'
import type {ReadableSpan} from '@opentelemetry/sdk-trace'
import {validateEvent} from '../../../src/core/event/index.js'
import {spanToEventBody} from '../../../src/core/otlp/event-body.js'
import {decodeTraceRequest, encodeTraceResponse} from '../../../src/services/otlp/codec.js'
import {exportTraces} from '../../../src/services/otlp/export.js'
import {SCOPE, SERVICE_NAME, captureExport, type Capture} from './sdk-capture.js'

/** Naive reference: an SDK HrTime [s, ns] -> ISO time truncated to ms, without bigint. */
function isoOf([seconds, nanos]: [number, number]): string {
  return new Date(seconds * 1000 + Math.floor(nanos / 1e6)).toISOString()
}

function durationOf(span: ReadableSpan): number {
  return (span.endTime[0] - span.startTime[0]) * 1000 + (span.endTime[1] - span.startTime[1]) / 1e6
}

/** The event fields the contract fixes for each span the capture emits. */
const EXPECTED: Record<
  string,
  {agent_id: string; action_type: string; action_name: string; action_status: string; error?: string}
> = {
  'invoke_agent travel-planner': {
    agent_id: 'travel-planner',
    action_type: 'AGENT_ACTION',
    action_name: 'invoke_agent travel-planner',
    action_status: 'success',
  },
  'chat gpt-4o': {agent_id: 'agent-42', action_type: 'LLM_CALL', action_name: 'chat gpt-4o', action_status: 'success'},
  'execute_tool get_weather': {
    agent_id: 'travel-planner',
    action_type: 'TOOL_CALL',
    action_name: 'get_weather',
    action_status: 'success',
  },
  'db.query': {agent_id: SERVICE_NAME, action_type: 'SPAN', action_name: 'db.query', action_status: 'success'},
  'embed documents': {
    agent_id: SERVICE_NAME,
    action_type: 'LLM_CALL',
    action_name: 'embed documents',
    action_status: 'success',
  },
  '': {agent_id: SERVICE_NAME, action_type: 'SPAN', action_name: 'unnamed_span', action_status: 'success'},
  'execute_tool book_flight': {
    agent_id: SERVICE_NAME,
    action_type: 'TOOL_CALL',
    action_name: 'book_flight',
    action_status: 'error',
    error: 'card declined',
  },
  'chat refused': {
    agent_id: SERVICE_NAME,
    action_type: 'LLM_CALL',
    action_name: 'chat refused',
    action_status: 'error',
    error: 'quota exceeded',
  },
}

function bodyOf(capture: Capture): Buffer {
  const request = capture.requests[0]!
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(request.body) : request.body
}

function checkEvents(capture: Capture, encoding: 'json' | 'protobuf'): void {
  const {spans} = decodeTraceRequest(bodyOf(capture), encoding)
  expect(spans.map((s) => s.name).sort()).to.deep.equal(Object.keys(EXPECTED).sort())
  for (const decoded of spans) {
    const sdk = capture.spans.get(decoded.name)!
    const body = spanToEventBody(decoded)
    expect(body, decoded.name).to.include(EXPECTED[decoded.name]!)
    if (!EXPECTED[decoded.name]!.error) expect(body).to.not.have.key('error')
    expect(body.trace_id).to.equal(sdk.spanContext().traceId)
    expect(body.span_id).to.equal(sdk.spanContext().spanId)
    expect(body.parent_id).to.equal(sdk.parentSpanContext?.spanId)
    expect(body.timestamp).to.equal(isoOf(sdk.startTime))
    expect(body.duration_ms as number).to.be.closeTo(durationOf(sdk), 1e-9)
    expect(body.labels).to.deep.include({'otel.scope.name': SCOPE.name, 'service.name': SERVICE_NAME})
    const metadata = body.metadata as Record<string, unknown>
    expect(metadata.attributes).to.deep.equal(sdk.attributes)
    expect(metadata.resource).to.deep.equal({'service.name': SERVICE_NAME, 'deployment.environment.name': 'test'})
    expect(metadata.scope).to.deep.equal({...SCOPE, attributes: {}})
    expect(metadata.span_kind).to.equal(['internal', 'server', 'client', 'producer', 'consumer'][sdk.kind])
    validateEvent(body, {now: new Date(), generateId: () => '01890a5d-ac96-774b-bcce-b302099a8057'})
  }
  const root = spans.find((s) => s.name === 'invoke_agent travel-planner')!
  expect(root.parentSpanId).to.equal('')
  expect(spanToEventBody(root)).to.not.have.key('parent_id')
  // Known answers: the capture's fixed times (sdk-capture.ts).
  const chat = spanToEventBody(spans.find((s) => s.name === 'chat gpt-4o')!)
  expect(chat).to.include({timestamp: '2023-11-14T22:13:20.123Z', duration_ms: 0.543212})
  expect(chat.metadata).to.deep.include({
    start_time_unix_nano: '1700000000123456789',
    end_time_unix_nano: '1700000000124000001',
  })
  const tool = spanToEventBody(spans.find((s) => s.name === 'execute_tool get_weather')!)
  expect((tool.metadata as Record<string, unknown>).events).to.deep.equal([
    {name: 'tool.input', time_unix_nano: '1700000000123456789', attributes: {city: 'Lisbon', days: 3}},
  ])
  const db = spanToEventBody(spans.find((s) => s.name === 'db.query')!)
  expect((db.metadata as Record<string, unknown>).links).to.deep.equal([
    {trace_id: root.traceId, span_id: root.spanId, attributes: {'link.kind': 'caused_by'}},
  ])
}

describe('services/otlp with the OpenTelemetry JS SDK exporters', () => {
  const captures: Record<string, Capture> = {}

  before(async () => {
    captures.json = await captureExport('json')
    captures.protobuf = await captureExport('protobuf')
    captures.jsonGzip = await captureExport('json', {gzip: true})
    captures.protobufGzip = await captureExport('protobuf', {gzip: true})
  })

  it('receives one POST /v1/traces per flush with the OTLP content types', () => {
    for (const [name, capture] of Object.entries(captures)) {
      expect(capture.requests, name).to.have.length(1)
      expect(capture.requests[0]!.path).to.equal('/v1/traces')
    }
    expect(captures.json!.requests[0]!.headers['content-type']).to.equal('application/json')
    expect(captures.protobuf!.requests[0]!.headers['content-type']).to.equal('application/x-protobuf')
    expect(captures.protobufGzip!.requests[0]!.headers['content-encoding']).to.equal('gzip')
  })

  it('maps every span of the JSON exporter', () => checkEvents(captures.json!, 'json'))
  it('maps every span of the protobuf exporter', () => checkEvents(captures.protobuf!, 'protobuf'))
  it('maps every span of both exporters with gzip', () => {
    checkEvents(captures.jsonGzip!, 'json')
    checkEvents(captures.protobufGzip!, 'protobuf')
  })

  it("decodes the SDK serializers' JSON and protobuf forms of the same spans identically", () => {
    const spans = [...captures.protobuf!.spans.values()]
    const fromJson = decodeTraceRequest(JsonTraceSerializer.serializeRequest(spans)!, 'json')
    const fromProtobuf = decodeTraceRequest(ProtobufTraceSerializer.serializeRequest(spans)!, 'protobuf')
    expect(fromProtobuf).to.deep.equal(fromJson)
    expect(fromJson.spans).to.have.length(spans.length)
  })

  it('records through exportTraces and answers a response the SDK reads', async () => {
    const recorded: unknown[] = []
    const recorder = {
      async recordElements(bodies: unknown[]) {
        recorded.push(...bodies)
        return {results: bodies.map(() => ({status: 201}))}
      },
    }
    for (const [name, capture] of Object.entries(captures)) {
      const request = capture.requests[0]!
      const result = await exportTraces(
        {
          body: request.body,
          contentType: request.headers['content-type'],
          contentEncoding: request.headers['content-encoding'],
        },
        recorder,
      )
      expect(result, name).to.include({acceptedSpans: 8, rejectedSpans: 0})
      const serializer = name.startsWith('json') ? JsonTraceSerializer : ProtobufTraceSerializer
      const body = typeof result.body === 'string' ? new TextEncoder().encode(result.body) : result.body
      expect(serializer.deserializeResponse(body)).to.deep.equal({})
    }
    expect(recorded).to.have.length(32)
  })

  it('gives the SDK a partial success it understands, in either encoding', () => {
    const protobuf = encodeTraceResponse({rejectedSpans: 2, errorMessage: '2 of 8 spans rejected'}, 'protobuf')
    expect(ProtobufTraceSerializer.deserializeResponse(protobuf.body as Uint8Array)).to.deep.equal({
      partialSuccess: {rejectedSpans: 2, errorMessage: '2 of 8 spans rejected'},
    })
    const json = encodeTraceResponse({rejectedSpans: 2, errorMessage: '2 of 8 spans rejected'}, 'json')
    expect(JsonTraceSerializer.deserializeResponse(new TextEncoder().encode(json.body as string))).to.deep.equal({
      partialSuccess: {rejectedSpans: '2', errorMessage: '2 of 8 spans rejected'},
    })
  })
})
