/**
 * Agent runs as the OpenTelemetry JS SDK really sends them (docs/otlp.md, "Which agent"), over
 * each transport: OTLP/HTTP JSON, OTLP/HTTP Protobuf and OTLP/gRPC, traces and logs, with the
 * official exporters against the real service on a loopback port.
 */
import {expect} from 'chai'
import {Metadata, credentials, makeGenericClientConstructor, status} from '@grpc/grpc-js'
import {ROOT_CONTEXT, SpanKind, trace, type Context, type Span, type Tracer} from '@opentelemetry/api'
import {SeverityNumber} from '@opentelemetry/api-logs'
import {OTLPLogExporter as GrpcLogExporter} from '@opentelemetry/exporter-logs-otlp-grpc'
import {OTLPLogExporter as JsonLogExporter} from '@opentelemetry/exporter-logs-otlp-http'
import {OTLPLogExporter as ProtobufLogExporter} from '@opentelemetry/exporter-logs-otlp-proto'
import {OTLPTraceExporter as GrpcTraceExporter} from '@opentelemetry/exporter-trace-otlp-grpc'
import {OTLPTraceExporter as JsonTraceExporter} from '@opentelemetry/exporter-trace-otlp-http'
import {OTLPTraceExporter as ProtobufTraceExporter} from '@opentelemetry/exporter-trace-otlp-proto'
import {resourceFromAttributes} from '@opentelemetry/resources'
import {BatchLogRecordProcessor, LoggerProvider} from '@opentelemetry/sdk-logs'
import {BatchSpanProcessor, TracerProvider} from '@opentelemetry/sdk-trace'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {startService, type RunningService} from '../../src/server/start.js'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {removeDir, tempDir} from '../support/harness.js'

type Transport = 'http/json' | 'http/protobuf' | 'grpc'
const TRANSPORTS: Transport[] = ['http/json', 'http/protobuf', 'grpc']
const SERVICE = 'support-service'
const WRITE_KEY = 'otlp-test-write-key-0123456789'
const READ_KEY = 'otlp-test-read-key-0123456789ab'

function grpcMetadata(key: string): Metadata {
  const metadata = new Metadata()
  metadata.set('authorization', `Bearer ${key}`)
  return metadata
}

function traceExporter(transport: Transport, service: RunningService) {
  const headers = {Authorization: `Bearer ${WRITE_KEY}`}
  if (transport === 'grpc')
    return new GrpcTraceExporter({url: `http://127.0.0.1:${service.otlpGrpcPort}`, metadata: grpcMetadata(WRITE_KEY)})
  const options = {url: `${service.url}/v1/traces`, headers}
  return transport === 'http/json' ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options)
}

function logExporter(transport: Transport, service: RunningService) {
  const headers = {Authorization: `Bearer ${WRITE_KEY}`}
  if (transport === 'grpc')
    return new GrpcLogExporter({url: `http://127.0.0.1:${service.otlpGrpcPort}`, metadata: grpcMetadata(WRITE_KEY)})
  const options = {url: `${service.url}/v1/logs`, headers}
  return transport === 'http/json' ? new JsonLogExporter(options) : new ProtobufLogExporter(options)
}

/** One SDK pipeline; `flush` exports what has ended so far, as a BatchSpanProcessor's timer does. */
function sdk(
  transport: Transport,
  service: RunningService,
  resource: Record<string, string> = {'service.name': SERVICE},
) {
  const tracerProvider = new TracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [
      new BatchSpanProcessor({exporter: traceExporter(transport, service), scheduledDelayMillis: 60_000}),
    ],
  })
  const loggerProvider = new LoggerProvider({
    resource: resourceFromAttributes(resource),
    processors: [
      new BatchLogRecordProcessor({exporter: logExporter(transport, service), scheduledDelayMillis: 60_000}),
    ],
  })
  return {
    tracer: tracerProvider.getTracer('agent-framework', '2.0.0'),
    logger: loggerProvider.getLogger('agent-framework'),
    flush: async () => {
      await tracerProvider.forceFlush()
      await loggerProvider.forceFlush()
    },
    shutdown: async () => {
      await tracerProvider.shutdown()
      await loggerProvider.shutdown()
    },
  }
}

const under = (span: Span): Context => trace.setSpan(ROOT_CONTEXT, span)

async function get(service: RunningService, query: string): Promise<{total: number; events: any[]}> {
  const response = await fetch(`${service.url}/v1/events?${query}&limit=1000`, {
    headers: {authorization: `Bearer ${READ_KEY}`},
  })
  expect(response.status, query).to.equal(200)
  return {total: Number(response.headers.get('x-total-count')), events: (await response.json()) as any[]}
}

/**
 * A run of support-bot of a dozen spans: a chat, then (exported first, before their parent) a tool
 * call with an HTTP child; then the rest with the invoke_agent; then a late span after it. A
 * sub-agent (billing-bot) is invoked within the run and has its own chat.
 */
async function agentRun(
  tracer: Tracer,
  flush: () => Promise<void>,
): Promise<{traceId: string; spans: Record<string, string>}> {
  const spans: Record<string, string> = {}
  const end = (span: Span, name: string) => {
    spans[name] = span.spanContext().spanId
    span.end()
  }
  const root = tracer.startSpan('invoke_agent support-bot', {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support-bot',
      'gen_ai.agent.id': 'asst_support',
      'gen_ai.conversation.id': 'conv-7',
    },
  })
  const run = under(root)
  end(
    tracer.startSpan(
      'chat gpt-4o',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'gen_ai.usage.input_tokens': 120,
          'gen_ai.usage.output_tokens': 30,
          'gen_ai.usage.cache_read.input_tokens': 100,
          'gen_ai.usage.reasoning.output_tokens': 7,
          'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"Where is order 42?"}]}]',
          'gen_ai.output.messages': '[{"role":"assistant","parts":[{"type":"tool_call","name":"crm.lookup"}]}]',
        },
      },
      run,
    ),
    'chat-1',
  )
  const tool = tracer.startSpan(
    'execute_tool crm.lookup',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'crm.lookup',
        'gen_ai.tool.call.id': 'call_abc',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.arguments': '{"order":42}',
        'gen_ai.tool.call.result': '{"status":"shipped"}',
        'gen_ai.agent.id': 'asst_support',
      },
    },
    run,
  )
  end(tracer.startSpan('GET /crm/orders/42', {kind: SpanKind.CLIENT}, under(tool)), 'http-1')
  end(tool, 'tool-1')
  // Exported now: the children reach the service before their invoke_agent parent.
  await flush()
  end(
    tracer.startSpan(
      'retrieval kb',
      {attributes: {'gen_ai.operation.name': 'retrieval', 'gen_ai.provider.name': 'pinecone'}},
      run,
    ),
    'retrieval',
  )
  end(tracer.startSpan('plan', {attributes: {'gen_ai.operation.name': 'plan'}}, run), 'plan')
  const sub = tracer.startSpan(
    'invoke_agent billing-bot',
    {attributes: {'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'billing-bot'}},
    run,
  )
  end(
    tracer.startSpan(
      'chat claude',
      {attributes: {'gen_ai.operation.name': 'chat', 'gen_ai.system': 'anthropic', 'gen_ai.usage.prompt_tokens': 11}},
      under(sub),
    ),
    'sub-chat',
  )
  end(tracer.startSpan('embeddings', {attributes: {'gen_ai.operation.name': 'embeddings'}}, under(sub)), 'embeddings')
  end(sub, 'sub-agent')
  const tool2 = tracer.startSpan(
    'execute_tool refund',
    {attributes: {'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'refund'}},
    run,
  )
  end(tracer.startSpan('POST /payments', {kind: SpanKind.CLIENT}, under(tool2)), 'http-2')
  end(tool2, 'tool-2')
  end(root, 'root')
  await flush()
  // A straggler after its parent was recorded: resolved through what was recorded before.
  end(
    tracer.startSpan('text_completion summary', {attributes: {'gen_ai.operation.name': 'text_completion'}}, run),
    'late',
  )
  await flush()
  return {traceId: root.spanContext().traceId, spans}
}

describe('OTLP agent runs with the real SDK exporters (HTTP JSON, HTTP Protobuf, gRPC)', function () {
  let dir: string
  let service: RunningService
  beforeEach(async () => {
    dir = await tempDir()
    const keys = path.join(dir, 'keys.txt')
    await writeFile(keys, `${WRITE_KEY} write\n${READ_KEY} read\n`)
    const apiKeys = parseKeyFile(`${WRITE_KEY} write\n${READ_KEY} read\n`, keys)
    service = await startService({
      dataDir: path.join(dir, 'data'),
      host: '127.0.0.1',
      port: 0,
      otlpGrpcPort: 0,
      apiKeys,
      app: {otlp: true, logError: () => {}},
    })
  })
  afterEach(async () => {
    await service.close()
    await removeDir(dir)
  })

  for (const transport of TRANSPORTS) {
    it(`records a run whose children arrive before their parent, one query by trace_id (${transport})`, async () => {
      const pipeline = sdk(transport, service)
      const {traceId, spans} = await agentRun(pipeline.tracer, pipeline.flush)
      await pipeline.shutdown()
      const {total, events} = await get(service, `trace_id=${traceId}`)
      expect(total).to.equal(12)
      const bySpan = new Map(events.map((event) => [event.span_id, event]))
      const at = (name: string) => bySpan.get(spans[name])!
      const agents = Object.fromEntries(
        Object.keys(spans).map((name) => [name, `${at(name).agent_id} (${at(name).labels['atrail.agent_source']})`]),
      )
      expect(agents).to.deep.equal({
        // Request 1: the parent had not arrived; the tool's own bare id is read as is.
        'chat-1': `${SERVICE} (service)`,
        'http-1': 'asst_support (ancestor)',
        'tool-1': 'asst_support (span)',
        // Request 2: parents in the same request, whatever their order; the sub-agent's own chain.
        retrieval: 'support-bot (ancestor)',
        plan: 'support-bot (ancestor)',
        'sub-chat': 'billing-bot (ancestor)',
        embeddings: 'billing-bot (ancestor)',
        'sub-agent': 'billing-bot (span)',
        'http-2': 'support-bot (ancestor)',
        'tool-2': 'support-bot (ancestor)',
        root: 'support-bot (span)',
        // Request 3: through the spans recorded before.
        late: 'support-bot (ancestor)',
      })
      // The mapping, field by field (docs/otlp.md).
      expect(at('root')).to.include({
        action_type: 'AGENT_ACTION',
        action_name: 'invoke_agent support-bot',
        session_id: 'conv-7',
        trace_id: traceId,
      })
      expect(at('root')).to.not.have.property('parent_id')
      expect(at('root').labels).to.include({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support-bot',
        'gen_ai.agent.id': 'asst_support',
        'gen_ai.conversation.id': 'conv-7',
        'service.name': SERVICE,
        'otel.scope.name': 'agent-framework',
      })
      const chat = at('chat-1')
      expect(chat).to.include({
        action_type: 'LLM_CALL',
        action_name: 'chat gpt-4o',
        parent_id: spans.root,
        action_status: 'success',
      })
      expect(chat.labels).to.include({
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': '120',
        'gen_ai.usage.output_tokens': '30',
        'gen_ai.usage.cache_read.input_tokens': '100',
        'gen_ai.usage.reasoning.output_tokens': '7',
      })
      expect(chat.input).to.equal('[{"role":"user","parts":[{"type":"text","content":"Where is order 42?"}]}]')
      expect(chat.output).to.equal('[{"role":"assistant","parts":[{"type":"tool_call","name":"crm.lookup"}]}]')
      expect(chat.metadata.attributes['gen_ai.usage.input_tokens']).to.equal(120)
      expect(at('tool-1')).to.include({
        action_type: 'TOOL_CALL',
        action_name: 'crm.lookup',
        input: '{"order":42}',
        output: '{"status":"shipped"}',
      })
      expect(at('tool-1').labels).to.include({
        'gen_ai.tool.call.id': 'call_abc',
        'gen_ai.tool.name': 'crm.lookup',
        'gen_ai.tool.type': 'function',
      })
      expect(at('http-1')).to.include({
        action_type: 'SPAN',
        action_name: 'GET /crm/orders/42',
        parent_id: spans['tool-1'],
      })
      expect(at('retrieval')).to.include({action_type: 'DATA_ACCESS'})
      expect(at('plan')).to.include({action_type: 'DECISION'})
      expect(at('embeddings')).to.include({action_type: 'LLM_CALL'})
      expect(at('late')).to.include({action_type: 'LLM_CALL'})
      // Older names: gen_ai.system and prompt_tokens under the current label keys.
      expect(at('sub-chat').labels).to.include({'gen_ai.provider.name': 'anthropic', 'gen_ai.usage.input_tokens': '11'})
      // The agent's chain holds its calls, and every chain verifies.
      const supportBot = await get(service, 'agent_id=support-bot')
      expect(supportBot.events.map((event) => event.sequence)).to.deep.equal([1, 2, 3, 4, 5, 6])
      expect((await get(service, 'session_id=conv-7')).total).to.equal(1)
      const verify = await fetch(`${service.url}/v1/verify?agent_id=support-bot`, {
        headers: {authorization: `Bearer ${READ_KEY}`},
      })
      expect(((await verify.json()) as any).valid).to.equal(true)
    })
  }

  it('keeps two agents of one service apart when their spans interleave in one request', async () => {
    const pipeline = sdk('http/protobuf', service)
    const a = pipeline.tracer.startSpan('invoke_agent triage', {
      attributes: {'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'triage'},
    })
    const b = pipeline.tracer.startSpan('invoke_agent refunds', {
      attributes: {'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'refunds'},
    })
    for (let i = 0; i < 3; i++) {
      pipeline.tracer.startSpan(`chat ${i}`, {attributes: {'gen_ai.operation.name': 'chat'}}, under(b)).end()
      pipeline.tracer.startSpan(`chat ${i}`, {attributes: {'gen_ai.operation.name': 'chat'}}, under(a)).end()
    }
    b.end()
    a.end()
    await pipeline.shutdown()
    for (const [root, agent] of [
      [a, 'triage'],
      [b, 'refunds'],
    ] as const) {
      const {events} = await get(service, `trace_id=${root.spanContext().traceId}`)
      expect(events.map((event) => event.agent_id)).to.deep.equal([agent, agent, agent, agent])
    }
  })

  it('finds a run whose invoke_agent never arrives by its trace_id, under the resource agent', async () => {
    const pipeline = sdk('grpc', service, {'service.name': SERVICE, 'gen_ai.agent.name': 'night-batch'})
    const root = pipeline.tracer.startSpan('invoke_agent night-batch', {
      attributes: {'gen_ai.operation.name': 'invoke_agent'},
    })
    for (const name of ['chat a', 'execute_tool b', 'chat c']) pipeline.tracer.startSpan(name, {}, under(root)).end()
    await pipeline.shutdown() // the root never ends: never exported
    const {events} = await get(service, `trace_id=${root.spanContext().traceId}`)
    expect(events.map((event) => [event.agent_id, event.labels['atrail.agent_source'], event.parent_id])).to.deep.equal(
      Array(3).fill(['night-batch', 'resource', root.spanContext().spanId]),
    )
  })

  for (const transport of TRANSPORTS) {
    it(`records log records with their trace and span, GenAI events as MESSAGE (${transport})`, async () => {
      const pipeline = sdk(transport, service)
      const root = pipeline.tracer.startSpan('invoke_agent support-bot', {
        attributes: {'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-bot'},
      })
      const chat = pipeline.tracer.startSpan(
        'chat gpt-4o',
        {attributes: {'gen_ai.operation.name': 'chat'}},
        under(root),
      )
      chat.end()
      root.end()
      await pipeline.flush()
      pipeline.logger.emit({
        eventName: 'gen_ai.client.inference.operation.details',
        severityNumber: SeverityNumber.INFO,
        severityText: 'INFO',
        timestamp: new Date('2026-11-21T09:00:00.250Z'),
        context: under(chat),
        body: {note: 'inference'},
        attributes: {
          'gen_ai.input.messages': '[{"role":"user"}]',
          'gen_ai.output.messages': '[{"role":"assistant"}]',
          'gen_ai.request.model': 'gpt-4o',
        },
      })
      pipeline.logger.emit({
        severityNumber: SeverityNumber.ERROR,
        severityText: 'ERROR',
        body: 'crm timed out',
        context: under(root),
      })
      pipeline.logger.emit({severityNumber: SeverityNumber.WARN, body: 'outside any span'})
      await pipeline.shutdown()
      const traceId = root.spanContext().traceId
      const {events} = await get(service, `trace_id=${traceId}`)
      expect(events).to.have.length(4)
      const details = events.find((event) => event.action_type === 'MESSAGE')!
      expect(details).to.include({
        agent_id: 'support-bot',
        action_name: 'gen_ai.client.inference.operation.details',
        action_status: 'success',
        trace_id: traceId,
        span_id: chat.spanContext().spanId,
        timestamp: '2026-11-21T09:00:00.250Z',
        input: '[{"role":"user"}]',
        output: '[{"role":"assistant"}]',
      })
      expect(details.labels).to.include({
        'log.severity': 'INFO',
        'gen_ai.request.model': 'gpt-4o',
        'atrail.agent_source': 'ancestor',
      })
      expect(details.metadata).to.deep.include({
        log_record: true,
        severity_number: 9,
        body: {note: 'inference'},
        event_name: 'gen_ai.client.inference.operation.details',
      })
      const failure = events.find((event) => event.action_type === 'LOG')!
      expect(failure).to.include({
        agent_id: 'support-bot',
        action_name: 'log',
        action_status: 'error',
        error: 'crm timed out',
        span_id: root.spanContext().spanId,
      })
      const outside = (await get(service, 'action_type=LOG')).events.find((event) => event.trace_id === undefined)!
      expect(outside).to.include({agent_id: SERVICE, action_status: 'success'})
      expect(outside.labels).to.include({'log.severity': 'warn', 'atrail.agent_source': 'service'})
    })
  }

  describe('refusals', () => {
    const client = () => {
      const bytes = (buffer: Buffer) => buffer
      const method = (path: string) => ({
        path,
        requestStream: false,
        responseStream: false,
        requestSerialize: bytes,
        requestDeserialize: bytes,
        responseSerialize: bytes,
        responseDeserialize: bytes,
      })
      const Client = makeGenericClientConstructor(
        {
          Traces: method('/opentelemetry.proto.collector.trace.v1.TraceService/Export'),
          Logs: method('/opentelemetry.proto.collector.logs.v1.LogsService/Export'),
        },
        'Otlp',
      )
      return new Client(`127.0.0.1:${service.otlpGrpcPort}`, credentials.createInsecure()) as any
    }
    const call = (method: 'Traces' | 'Logs', body: Buffer, key?: string) =>
      new Promise<{code: number; details?: string}>((resolve) => {
        const grpc = client()
        grpc[method](
          body,
          key === undefined ? new Metadata() : grpcMetadata(key),
          (error: {code: number; details: string} | null) => {
            grpc.close()
            resolve(error ?? {code: status.OK})
          },
        )
      })

    it('answers gRPC statuses: INVALID_ARGUMENT, UNAUTHENTICATED, PERMISSION_DENIED; records nothing', async () => {
      const garbage = Buffer.from([0xff, 0xff, 0xff, 0x01])
      expect(await call('Traces', garbage, WRITE_KEY)).to.include({code: status.INVALID_ARGUMENT})
      expect(await call('Logs', garbage, WRITE_KEY)).to.include({code: status.INVALID_ARGUMENT})
      expect(await call('Traces', Buffer.alloc(0))).to.include({code: status.UNAUTHENTICATED})
      expect(await call('Logs', Buffer.alloc(0), 'not-a-key-of-this-service')).to.include({
        code: status.UNAUTHENTICATED,
      })
      expect(await call('Logs', Buffer.alloc(0), READ_KEY)).to.include({code: status.PERMISSION_DENIED})
      // An empty request is a valid one with nothing in it.
      expect(await call('Logs', Buffer.alloc(0), WRITE_KEY)).to.include({code: status.OK})
      expect(await service.services.tree.size()).to.equal(0)
    })

    it('answers 400 to malformed /v1/logs bodies, 401 without a key, and records nothing', async () => {
      const post = (type: string, body: string, key = WRITE_KEY) =>
        fetch(`${service.url}/v1/logs`, {
          method: 'POST',
          headers: {'content-type': type, authorization: `Bearer ${key}`},
          body,
        })
      for (const [type, body] of [
        ['application/json', '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"spanId": "xyz"}]}]}]}'],
        ['application/json', '{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"severityNumber": "loud"}]}]}]}'],
        ['application/json', '{nope'],
        ['application/x-protobuf', '\u00ff\u00ff\u00ff\u0001'],
      ]) {
        const response = await post(type!, body!)
        expect(response.status, body).to.equal(400)
        expect(((await response.json()) as any).error.code).to.be.oneOf(['invalid_json', 'validation_error'])
      }
      expect((await post('application/json', '{}', READ_KEY)).status).to.equal(403)
      expect((await post('text/plain', '{}')).status).to.equal(415)
      expect(await service.services.tree.size()).to.equal(0)
    })
  })
})
