import type {AuditServices} from '../../src/services/audit.js'
import {exportTraces} from '../../src/services/otlp/export.js'
import {fmt, record, timedAsync} from '../common.js'

export async function otlpPhase(services: AuditServices): Promise<void> {
  const spans = Array.from({length: 512}, (_, i) => ({
    traceId: '5b8efff798038103d269b633813fc60c',
    spanId: (0x1000000000000000n + BigInt(i)).toString(16),
    name: `execute_tool step-${i}`,
    startTimeUnixNano: '1763715600000000000',
    endTimeUnixNano: '1763715600250000000',
    attributes: [
      {key: 'gen_ai.operation.name', value: {stringValue: 'execute_tool'}},
      {key: 'gen_ai.tool.name', value: {stringValue: 'web_search'}},
      {key: 'gen_ai.agent.name', value: {stringValue: 'researcher'}},
    ],
  }))
  const body = Buffer.from(
    JSON.stringify({
      resourceSpans: [
        {resource: {attributes: [{key: 'service.name', value: {stringValue: 'bench'}}]}, scopeSpans: [{spans}]},
      ],
    }),
  )
  // Like an OpenTelemetry Collector's exporter, which sends from several consumers at once
  // (otlphttp sending_queue.num_consumers, 10 by default): here 4 requests in flight.
  const rounds = 40
  const inFlight = 4
  let next = 0
  const [, ms] = await timedAsync(() =>
    Promise.all(
      Array.from({length: inFlight}, async () => {
        while (next++ < rounds)
          await exportTraces({body, contentType: 'application/json', contentEncoding: undefined}, services.ingest)
      }),
    ),
  )
  record({
    what: `OTLP/JSON ingest, batches of 512 spans, ${inFlight} requests in flight (in-process, durable)`,
    value: `${fmt((rounds * 512) / (ms / 1000))} spans/s`,
    target: '>= 20,000 /s',
  })
}
