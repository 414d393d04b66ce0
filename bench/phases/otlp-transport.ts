import {once} from 'node:events'
import {Worker} from 'node:worker_threads'
import http from 'node:http'
import {createApp} from '../../src/server/app.js'
import type {AuditServices} from '../../src/services/audit.js'
import {AgentDirectory} from '../../src/core/otlp/agents.js'
import {spanToEventBody} from '../../src/core/otlp/event-body.js'
import {decodeJsonTraceRequest} from '../../src/core/otlp/trace-request.js'
import {startOtlpGrpc} from '../../src/server/grpc.js'
import {encodeProtobufTraceRequest} from '../../src/services/otlp/protobuf.js'
import {fmt, record} from '../common.js'

/**
 * A run of 512 GenAI spans as an SDK sends it: an invoke_agent and, under it, chats and tool calls
 * that name no agent (so every span goes through agent resolution), with the usual attributes.
 */
export function agentRunRequest(round: number, ids: 'hex' | 'base64'): Record<string, unknown> {
  const id = (hex: string) => (ids === 'hex' ? hex : Buffer.from(hex, 'hex').toString('base64'))
  const traceId = id(round.toString(16).padStart(32, '0'))
  const spanId = (i: number) => id((0x1000000000000000n + BigInt(i)).toString(16))
  const attribute = (key: string, value: string | number) => ({
    key,
    value: typeof value === 'number' ? {intValue: String(value)} : {stringValue: value},
  })
  const root = [attribute('gen_ai.operation.name', 'invoke_agent'), attribute('gen_ai.agent.name', 'researcher')]
  const chat = [
    attribute('gen_ai.operation.name', 'chat'),
    attribute('gen_ai.provider.name', 'openai'),
    attribute('gen_ai.request.model', 'gpt-4o'),
    attribute('gen_ai.usage.input_tokens', 1200),
    attribute('gen_ai.usage.output_tokens', 80),
  ]
  const tool = (i: number) => [
    attribute('gen_ai.operation.name', 'execute_tool'),
    attribute('gen_ai.tool.name', 'web_search'),
    attribute('gen_ai.tool.call.id', `call_${i}`),
    attribute('gen_ai.tool.call.arguments', '{"q":"audit"}'),
  ]
  const spans = Array.from({length: 512}, (_, i) => ({
    traceId,
    spanId: spanId(i),
    parentSpanId: i === 511 ? undefined : spanId(511),
    name: i === 511 ? 'invoke_agent researcher' : `step ${i}`,
    startTimeUnixNano: '1763715600000000000',
    endTimeUnixNano: '1763715600250000000',
    attributes: i === 511 ? root : i % 2 === 0 ? chat : tool(i),
  }))
  const resource = {attributes: [attribute('service.name', 'bench')]}
  return {resourceSpans: [{resource, scopeSpans: [{scope: {name: 'agent-framework'}, spans}]}]}
}

/** Sends prepared bodies from a thread of its own (bench/otlp-load-worker.mjs); resolves with events/s. */
export async function sendFromWorker(
  kind: 'http' | 'grpc',
  target: string,
  bodies: Buffer[],
  type = '',
): Promise<number> {
  const worker = new Worker(new URL('otlp-load-worker.mjs', import.meta.url), {
    workerData: {kind, target, type, bodies, inFlight: 4, eventsPerBody: 512},
  })
  const [rate] = (await once(worker, 'message')) as [number]
  return rate
}

/**
 * OTLP over the wire, batches of 512 spans, beside POST /v1/batch of the same events (what the
 * mapping makes of them) in the same run: the gap is the cost of decoding and mapping.
 */
export async function otlpTransportPhase(services: AuditServices): Promise<void> {
  const agents = new AgentDirectory()
  const app = createApp(services, {otlp: true, otlpAgents: agents, logError: () => {}})
  const server = http.createServer(app.callback())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
  const trails = async () => ({recorder: services.ingest, agents})
  const grpc = await startOtlpGrpc({host: '127.0.0.1', port: 0, trails})
  // The first body of each row is sent untimed (the worker warms up on it), then 20 measured.
  const rounds = 21
  const inFlight = 4
  const requests = Array.from({length: rounds}, (_, r) => r + 1)
  const json = requests.map((r) => Buffer.from(JSON.stringify(agentRunRequest(r, 'hex'))))
  const protobufBodies = requests.map((r) => Buffer.from(encodeProtobufTraceRequest(agentRunRequest(r, 'base64'))))
  const batches = json.map((body) => {
    const spans = decodeJsonTraceRequest(body).spans
    const resolved = new AgentDirectory().resolveSpans(spans)
    return Buffer.from(JSON.stringify(spans.map((span, i) => spanToEventBody(span, resolved[i]))))
  })
  const rows: Array<[string, () => Promise<number>]> = [
    ['POST /v1/batch', () => sendFromWorker('http', `${url}/v1/batch`, batches, 'application/json')],
    ['OTLP/HTTP JSON (POST /v1/traces)', () => sendFromWorker('http', `${url}/v1/traces`, json, 'application/json')],
    [
      'OTLP/HTTP Protobuf (POST /v1/traces)',
      () => sendFromWorker('http', `${url}/v1/traces`, protobufBodies, 'application/x-protobuf'),
    ],
    ['OTLP/gRPC (TraceService/Export)', () => sendFromWorker('grpc', `127.0.0.1:${grpc.port}`, protobufBodies)],
  ]
  // Rounds of the four rows, the order turned each round, so that background work of the store
  // (a snapshot, the search thread) falls on every row alike; each row's figure is its median.
  const REPEATS = 5
  const rates: number[][] = rows.map(() => [])
  for (let round = 0; round < REPEATS; round++) {
    for (let k = 0; k < rows.length; k++) {
      const row = (round + k) % rows.length
      rates[row]!.push(await rows[row]![1]())
    }
  }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!
  const batch = median(rates[0]!)
  record({
    what:
      `POST /v1/batch of the same events as the OTLP rows, 512 a request, ${inFlight} in flight (loopback, durable; ` +
      `median of ${REPEATS})`,
    value: `${fmt(batch)} events/s`,
    target: '-',
  })
  for (let row = 1; row < rows.length; row++) {
    const rate = median(rates[row]!)
    const ratios = rates[row]!.map((value, round) => (100 * value) / rates[0]![round]!)
    record({
      what: `${rows[row]![0]}, 512 GenAI spans a request, ${inFlight} in flight (median of ${REPEATS})`,
      value: `${fmt(rate)} spans/s`,
      target: 'at most a third below /v1/batch',
      ceiling: `${fmt((100 * rate) / batch)} % of /v1/batch (per round: ${ratios.map((r) => fmt(r)).join(', ')} %)`,
    })
  }
  await grpc.close()
  server.closeAllConnections()
  server.close()
}
