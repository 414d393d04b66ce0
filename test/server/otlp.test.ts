import {expect} from 'chai'
import {SpanStatusCode, ROOT_CONTEXT, trace} from '@opentelemetry/api'
import {OTLPTraceExporter as JsonExporter} from '@opentelemetry/exporter-trace-otlp-http'
import {OTLPTraceExporter as ProtobufExporter} from '@opentelemetry/exporter-trace-otlp-proto'
import {CompressionAlgorithm} from '@opentelemetry/otlp-exporter-base'
import {resourceFromAttributes} from '@opentelemetry/resources'
import {BatchSpanProcessor, TracerProvider} from '@opentelemetry/sdk-trace'
import {startService} from '../../src/server/start.js'
import {removeDir, tempDir, useService} from '../support/harness.js'
import zlib from 'node:zlib'

const START: [number, number] = [1_763_715_600, 250_000_000] // 2025-11-21T09:00:00.250Z
const END: [number, number] = [1_763_715_601, 750_000_000] // 1.5 s later

/** Sends three spans through the real OpenTelemetry SDK and exporter to the running service. */
async function sendSpans(
  url: string,
  encoding: 'json' | 'protobuf',
  gzip: boolean,
): Promise<{traceId: string; rootSpanId: string}> {
  const options = {url: `${url}/v1/traces`, compression: gzip ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE}
  const exporter = encoding === 'json' ? new JsonExporter(options) : new ProtobufExporter(options)
  const provider = new TracerProvider({
    resource: resourceFromAttributes({'service.name': `svc-${encoding}`}),
    spanProcessors: [new BatchSpanProcessor({exporter, scheduledDelayMillis: 60_000})],
  })
  const tracer = provider.getTracer('test')
  const root = tracer.startSpan('invoke_agent planner', {
    startTime: START,
    attributes: {'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': `planner-${encoding}`},
  })
  const parent = trace.setSpan(ROOT_CONTEXT, root)
  tracer
    .startSpan(
      'execute_tool search',
      {
        startTime: START,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'web_search',
          'gen_ai.agent.name': `planner-${encoding}`,
        },
      },
      parent,
    )
    .end(END)
  const plain = tracer.startSpan('GET /inventory', {startTime: START}, parent)
  plain.setStatus({code: SpanStatusCode.ERROR, message: 'upstream 503'})
  plain.end(END)
  root.end(END)
  await provider.forceFlush()
  await provider.shutdown()
  return {traceId: root.spanContext().traceId, rootSpanId: root.spanContext().spanId}
}

describe('POST /v1/traces with the real OpenTelemetry SDK', () => {
  const service = useService({app: {otlp: true, logError: () => {}}})

  for (const [encoding, gzip] of [
    ['json', false],
    ['protobuf', false],
    ['protobuf', true],
    ['json', true],
  ] as const) {
    it(`records each span as an event (${encoding}${gzip ? ', gzip' : ''})`, async () => {
      const {traceId, rootSpanId} = await sendSpans(service.url, encoding, gzip)
      const events = (await (await fetch(`${service.url}/v1/events`)).json()) as any[]
      expect(events).to.have.length(3)
      const byName = new Map(events.map((e) => [e.action_name, e]))
      const tool = byName.get('web_search')
      expect(tool).to.include({
        agent_id: `planner-${encoding}`,
        action_type: 'TOOL_CALL',
        action_status: 'success',
        trace_id: traceId,
        parent_id: rootSpanId,
        timestamp: '2025-11-21T09:00:00.250Z',
        duration_ms: 1500,
      })
      expect(tool.span_id).to.match(/^[0-9a-f]{16}$/)
      expect(JSON.stringify(tool.metadata)).to.contain('gen_ai.tool.name')
      const root = byName.get('invoke_agent planner')
      expect(root).to.include({agent_id: `planner-${encoding}`, action_type: 'AGENT_ACTION', span_id: rootSpanId})
      expect(root).not.to.have.property('parent_id')
      const plain = byName.get('GET /inventory')
      // It names no agent: its parent invoke_agent's, in the same request (docs/otlp.md, "Which agent").
      expect(plain).to.include({agent_id: `planner-${encoding}`, action_type: 'SPAN', action_status: 'error'})
      expect(plain.labels).to.include({'atrail.agent_source': 'ancestor', 'service.name': `svc-${encoding}`})
      // The recorded spans are ordinary events: chained and verifiable.
      const verify = (await (await fetch(`${service.url}/v1/verify`)).json()) as any
      expect(verify.valid).to.equal(true)
    })
  }

  it('answers 400 to malformed bodies and records nothing', async () => {
    for (const [type, body] of [
      ['application/json', '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}'],
      ['application/json', '{nope'],
      ['application/x-protobuf', '\u00ff\u00ff\u00ff\u0001'],
    ]) {
      const res = await fetch(`${service.url}/v1/traces`, {method: 'POST', headers: {'content-type': type!}, body})
      expect(res.status, body).to.equal(400)
      expect(((await res.json()) as any).error.code).to.be.oneOf(['invalid_json', 'validation_error'])
    }
    expect(await service.services.tree.size()).to.equal(0)
  })

  it('takes a body of up to 20 MiB, compressed or not, and answers 413 over it', async () => {
    const MiB = 1024 * 1024
    const padded = (bytes: number) => ' '.repeat(bytes - 2) + '{}' // an empty request, padded with blanks
    for (const gzip of [false, true]) {
      const send = (text: string) =>
        fetch(`${service.url}/v1/traces`, {
          method: 'POST',
          headers: {'content-type': 'application/json', ...(gzip ? {'content-encoding': 'gzip'} : {})},
          body: gzip ? zlib.gzipSync(text) : text,
        })
      const within = await send(padded(20 * MiB))
      expect(within.status, `20 MiB, gzip ${gzip}`).to.equal(200)
      const over = await send(padded(20 * MiB + 1))
      expect(over.status, `20 MiB + 1, gzip ${gzip}`).to.equal(413)
      expect(((await over.json()) as any).error.code).to.equal('payload_too_large')
    }
    expect(await service.services.tree.size()).to.equal(0)
  })

  it('is 404 without --otlp, saying that serve --otlp enables it', async () => {
    const other = await startService({dataDir: await tempDir(), host: '127.0.0.1', port: 0})
    try {
      for (const [path, body] of [
        ['/v1/traces', '{"resourceSpans": []}'],
        ['/v1/logs', '{"resourceLogs": []}'],
      ]) {
        const headers = {'content-type': 'application/json'}
        const res = await fetch(`${other.url}${path}`, {method: 'POST', headers, body})
        expect(res.status).to.equal(404)
        const {error} = (await res.json()) as {error: {code: string; message: string}}
        expect(error.code).to.equal('not_found')
        expect(error.message).to.equal(`POST ${path} is served only when the server runs with --otlp (serve --otlp)`)
      }
    } finally {
      await other.close()
      await removeDir(other.services.dataDir)
    }
  })
})
