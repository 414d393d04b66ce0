import {expect} from 'chai'
import {validateEvent} from '../../../src/core/event/index.js'
import {AuditError} from '../../../src/core/errors.js'
import {logRecordToEventBody} from '../../../src/core/otlp/log-body.js'
import {decodeJsonLogsRequest, type DecodedLogRecord} from '../../../src/core/otlp/log-record.js'

const TRACE = '5b8efff798038103d269b633813fc60c'
const SPAN = 'eee19b7ec3c1b174'
const agent = {agent: 'support-bot', source: 'ancestor' as const}

function request(record: Record<string, unknown>, root = 'resourceLogs'): Uint8Array {
  const scope =
    root === 'resourceLogs'
      ? {scopeLogs: [{scope: {name: 'lib', version: '1'}, logRecords: [record]}]}
      : {scope_logs: [{scope: {name: 'lib', version: '1'}, log_records: [record]}]}
  return Buffer.from(
    JSON.stringify({
      [root]: [{resource: {attributes: [{key: 'service.name', value: {stringValue: 'svc'}}]}, ...scope}],
    }),
  )
}

function decodeOne(record: Record<string, unknown>): DecodedLogRecord {
  const records = decodeJsonLogsRequest(request(record))
  expect(records).to.have.length(1)
  return records[0]!
}

describe('core/otlp/log-record and log-body (log record -> event, docs/otlp.md)', () => {
  it('decodes every field of a LogRecord, lowerCamelCase or proto field names', () => {
    const camel = {
      timeUnixNano: '1763715600100000000',
      observedTimeUnixNano: '1763715600200000000',
      severityNumber: 17,
      severityText: 'ERROR',
      body: {stringValue: 'crm timed out'},
      attributes: [{key: 'exception.message', value: {stringValue: 'ETIMEDOUT'}}],
      droppedAttributesCount: 2,
      flags: 1,
      traceId: TRACE.toUpperCase(),
      spanId: SPAN,
      eventName: 'crm.failure',
    }
    const decoded = decodeOne(camel)
    expect(decoded).to.deep.include({
      timeUnixNano: 1763715600100000000n,
      observedTimeUnixNano: 1763715600200000000n,
      severityNumber: 17,
      severityText: 'ERROR',
      body: 'crm timed out',
      attributes: {'exception.message': 'ETIMEDOUT'},
      droppedAttributesCount: 2,
      flags: 1,
      traceId: TRACE,
      spanId: SPAN,
      eventName: 'crm.failure',
    })
    const snake = {
      time_unix_nano: '1763715600100000000',
      severity_number: 'SEVERITY_NUMBER_ERROR',
      trace_id: TRACE,
      span_id: SPAN,
      event_name: 'crm.failure',
    }
    const [fromSnake] = decodeJsonLogsRequest(request(snake, 'resource_logs'))
    expect(fromSnake).to.deep.include({severityNumber: 17, traceId: TRACE, spanId: SPAN, eventName: 'crm.failure'})
  })

  it('refuses a malformed record as a whole, naming the field', () => {
    for (const [record, field] of [
      [{spanId: 'abc'}, 'resourceLogs[0].scopeLogs[0].logRecords[0].spanId'],
      [{severityNumber: 'loud'}, 'resourceLogs[0].scopeLogs[0].logRecords[0].severityNumber'],
      [{body: {kvlistValue: {values: 'x'}}}, 'resourceLogs[0].scopeLogs[0].logRecords[0].body.kvlistValue.values'],
      [{timeUnixNano: '-1'}, 'resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano'],
    ] as const) {
      let thrown: unknown
      try {
        decodeOne(record)
      } catch (error) {
        thrown = error
      }
      expect(thrown, field).to.be.instanceOf(AuditError).with.property('code', 'validation_error')
      expect((thrown as AuditError).details![0]!.field).to.equal(field)
    }
  })

  it('maps an ERROR record: LOG, status error, error from exception.message, labels, metadata', () => {
    const body = logRecordToEventBody(
      decodeOne({
        timeUnixNano: '1763715600100000000',
        severityNumber: 17,
        body: {stringValue: 'crm timed out'},
        attributes: [{key: 'exception.message', value: {stringValue: 'ETIMEDOUT'}}],
        traceId: TRACE,
        spanId: SPAN,
      }),
      agent,
    )
    expect(body).to.deep.include({
      agent_id: 'support-bot',
      action_type: 'LOG',
      action_name: 'log',
      action_status: 'error',
      error: 'ETIMEDOUT',
      timestamp: '2025-11-21T09:00:00.100Z',
      trace_id: TRACE,
      span_id: SPAN,
    })
    expect(body).to.not.have.property('parent_id')
    expect(body.labels).to.deep.equal({
      'otel.scope.name': 'lib',
      'service.name': 'svc',
      'atrail.agent_source': 'ancestor',
      'log.severity': 'error',
    })
    expect(body.metadata).to.deep.equal({
      log_record: true,
      time_unix_nano: '1763715600100000000',
      observed_time_unix_nano: '0',
      severity_number: 17,
      body: 'crm timed out',
      attributes: {'exception.message': 'ETIMEDOUT'},
      resource: {'service.name': 'svc'},
      scope: {name: 'lib', version: '1', attributes: {}},
    })
    validateEvent(body, {now: new Date(), generateId: () => '01890a5d-ac96-774b-bcce-b302099a8057'})
  })

  it('maps a GenAI event: MESSAGE, its name, content as input/output; observed time when no time', () => {
    const body = logRecordToEventBody(
      decodeOne({
        observedTimeUnixNano: '1763715600200000000',
        severityNumber: 10,
        attributes: [
          {key: 'event.name', value: {stringValue: 'gen_ai.client.inference.operation.details'}},
          {key: 'gen_ai.input.messages', value: {stringValue: '[{"role":"user"}]'}},
          {key: 'gen_ai.output.messages', value: {stringValue: '[{"role":"assistant"}]'}},
          {key: 'gen_ai.conversation.id', value: {stringValue: 'conv-9'}},
        ],
        spanId: '0000000000000000',
      }),
      agent,
    )
    expect(body).to.deep.include({
      action_type: 'MESSAGE',
      action_name: 'gen_ai.client.inference.operation.details',
      action_status: 'success',
      timestamp: '2025-11-21T09:00:00.200Z',
      input: '[{"role":"user"}]',
      output: '[{"role":"assistant"}]',
      session_id: 'conv-9',
    })
    expect(body).to.not.have.any.keys('span_id', 'trace_id', 'error')
    expect(body.labels).to.include({'log.severity': 'info2', 'gen_ai.conversation.id': 'conv-9'})
  })
})
