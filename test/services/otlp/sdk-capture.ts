/**
 * Captures what the real OpenTelemetry JS SDK sends over OTLP/HTTP: a loopback server records
 * request bodies and headers, a TracerProvider exports a fixed set of agent-like spans to it
 * with the official exporters (JSON: @opentelemetry/exporter-trace-otlp-http, binary Protobuf:
 * @opentelemetry/exporter-trace-otlp-proto), and an in-memory exporter keeps the SDK's own view
 * of the same spans to compare the decoded wire data with.
 */
import {once} from 'node:events'
import {createServer, type IncomingHttpHeaders} from 'node:http'
import type {AddressInfo} from 'node:net'
import {ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer} from '@opentelemetry/api'
import {OTLPTraceExporter as JsonExporter} from '@opentelemetry/exporter-trace-otlp-http'
import {OTLPTraceExporter as ProtobufExporter} from '@opentelemetry/exporter-trace-otlp-proto'
import {CompressionAlgorithm} from '@opentelemetry/otlp-exporter-base'
import {resourceFromAttributes} from '@opentelemetry/resources'
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace'

export interface CapturedRequest {
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
}

export interface Capture {
  requests: CapturedRequest[]
  /** The SDK's own record of the exported spans, by span name. */
  spans: Map<string, ReadableSpan>
}

/** Fixed times (HrTime [seconds, nanoseconds]) so that timestamps have known answers. */
export const T0: [number, number] = [1_700_000_000, 123_456_789]
export const T0_PLUS_1500MS: [number, number] = [1_700_000_001, 623_456_789]
export const T0_PLUS_543212NS: [number, number] = [1_700_000_000, 124_000_001]

export const SERVICE_NAME = 'booking-service'
export const SCOPE = {name: 'agent-framework', version: '1.4.2'}

/**
 * The spans: a root invoke_agent, and under it a chat, a tool call, a plain span with a link,
 * an unknown operation, a span without a name, a failing tool call (exception, no status
 * message) and a failing chat (status message).
 */
function emitAgentSpans(tracer: Tracer): void {
  const root = tracer.startSpan('invoke_agent travel-planner', {
    startTime: T0,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'travel-planner',
      'gen_ai.agent.id': 'agent-42',
    },
  })
  const parent = trace.setSpan(ROOT_CONTEXT, root)
  tracer
    .startSpan(
      'chat gpt-4o',
      {
        kind: SpanKind.CLIENT,
        startTime: T0,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.agent.id': 'agent-42',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.input_tokens': 100,
          'gen_ai.request.temperature': 0.25,
          'gen_ai.response.finish_reasons': ['stop', 'length'],
        },
      },
      parent,
    )
    .end(T0_PLUS_543212NS)
  const tool = tracer.startSpan(
    'execute_tool get_weather',
    {
      startTime: T0,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.agent.name': 'travel-planner',
        'tool.cached': true,
      },
    },
    parent,
  )
  tool.addEvent('tool.input', {city: 'Lisbon', days: 3}, T0)
  tool.end(T0_PLUS_1500MS)
  tracer
    .startSpan(
      'db.query',
      {
        kind: SpanKind.SERVER,
        startTime: T0,
        links: [{context: root.spanContext(), attributes: {'link.kind': 'caused_by'}}],
      },
      parent,
    )
    .end(T0_PLUS_1500MS)
  tracer
    .startSpan('embed documents', {startTime: T0, attributes: {'gen_ai.operation.name': 'embeddings'}}, parent)
    .end(T0_PLUS_1500MS)
  tracer.startSpan('', {startTime: T0}, parent).end(T0_PLUS_1500MS)
  const failing = tracer.startSpan(
    'execute_tool book_flight',
    {
      startTime: T0,
      attributes: {'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'book_flight'},
    },
    parent,
  )
  failing.recordException(new Error('card declined'), T0)
  failing.setStatus({code: SpanStatusCode.ERROR})
  failing.end(T0_PLUS_1500MS)
  const refused = tracer.startSpan(
    'chat refused',
    {startTime: T0, attributes: {'gen_ai.operation.name': 'chat'}},
    parent,
  )
  refused.setStatus({code: SpanStatusCode.ERROR, message: 'quota exceeded'})
  refused.end(T0_PLUS_1500MS)
  root.end(T0_PLUS_1500MS)
}

/** Runs the SDK against a loopback server; `respond` answers each request (default: empty 200). */
export async function captureExport(
  encoding: 'json' | 'protobuf',
  options: {
    gzip?: boolean
    respond?: (request: CapturedRequest) => {status: number; contentType: string; body: Uint8Array | string}
  } = {},
): Promise<Capture> {
  const requests: CapturedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = {path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks)}
      requests.push(request)
      const reply = options.respond?.(request) ?? {
        status: 200,
        contentType: req.headers['content-type'] ?? '',
        body: '',
      }
      res.writeHead(reply.status, {'content-type': reply.contentType}).end(reply.body)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`
  const compression = options.gzip ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE
  const exporter = encoding === 'json' ? new JsonExporter({url, compression}) : new ProtobufExporter({url, compression})
  const memory = new InMemorySpanExporter()
  const provider = new TracerProvider({
    resource: resourceFromAttributes({'service.name': SERVICE_NAME, 'deployment.environment.name': 'test'}),
    spanProcessors: [
      new BatchSpanProcessor({exporter, scheduledDelayMillis: 60_000}),
      new SimpleSpanProcessor({exporter: memory}),
    ],
  })
  try {
    emitAgentSpans(provider.getTracer(SCOPE.name, SCOPE.version))
    await provider.forceFlush()
    const spans = new Map(memory.getFinishedSpans().map((span) => [span.name, span]))
    return {requests, spans}
  } finally {
    await provider.shutdown()
    server.closeAllConnections()
    server.close()
  }
}
