import {expect} from 'chai'
import fc from 'fast-check'
import {validateEvent} from '../../../src/core/event/index.js'
import {ACTION_TYPES, spanToEventBody} from '../../../src/core/otlp/event-body.js'
import type {AttributeMap, DecodedSpan} from '../../../src/core/otlp/span.js'

// 1700000000.123456789 s: `date -u -d @1700000000.123456789 +%Y-%m-%dT%H:%M:%S.%3NZ` -> 2023-11-14T22:13:20.123Z
const START = 1_700_000_000_123_456_789n

function span(overrides: Partial<DecodedSpan> = {}): DecodedSpan {
  return {
    resource: {'service.name': 'booking-service'},
    scope: {name: 'agent-framework', version: '1.4.2', attributes: {}},
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    parentSpanId: '53995c3f42cd8ad8',
    traceState: '',
    name: 'execute_tool get_weather',
    kind: 1,
    startTimeUnixNano: START,
    endTimeUnixNano: START + 1_500_000_000n,
    attributes: {},
    events: [],
    links: [],
    status: {code: 0, message: ''},
    dropped: {attributes: 0, events: 0, links: 0},
    flags: 0,
    ...overrides,
  }
}

function withAttributes(attributes: AttributeMap, overrides: Partial<DecodedSpan> = {}): Record<string, unknown> {
  return spanToEventBody(span({attributes, ...overrides}))
}

describe('core/otlp/event-body (span -> event, docs/api.md "Other")', () => {
  it('maps gen_ai.operation.name to action_type, anything else to SPAN', () => {
    const table: Array<[unknown, string]> = [
      ['execute_tool', 'TOOL_CALL'],
      ['chat', 'LLM_CALL'],
      ['text_completion', 'LLM_CALL'],
      ['generate_content', 'LLM_CALL'],
      ['invoke_agent', 'AGENT_ACTION'],
      ['create_agent', 'AGENT_ACTION'],
      ['invoke_workflow', 'AGENT_ACTION'],
      ['embeddings', 'LLM_CALL'],
      ['retrieval', 'DATA_ACCESS'],
      ['plan', 'DECISION'],
      ['completion', 'LLM_CALL'],
      ['embedding', 'LLM_CALL'],
      ['execute', 'SPAN'],
      ['Chat', 'SPAN'],
      ['constructor', 'SPAN'],
      ['toString', 'SPAN'],
      [7, 'SPAN'],
      [undefined, 'SPAN'],
    ]
    for (const [operation, type] of table) {
      const attributes: AttributeMap = operation === undefined ? {} : {'gen_ai.operation.name': operation as string}
      expect(withAttributes(attributes).action_type, String(operation)).to.equal(type)
    }
    expect(Object.keys(ACTION_TYPES)).to.have.length(12)
  })

  it('takes agent_id from gen_ai.agent.name, gen_ai.agent.id, resource service.name, then unknown_service', () => {
    const name = {'gen_ai.agent.name': 'travel-planner'}
    const id = {'gen_ai.agent.id': 'agent-42'}
    expect(withAttributes({...id, ...name}).agent_id).to.equal('travel-planner')
    expect(withAttributes(id).agent_id).to.equal('agent-42')
    expect(withAttributes({}).agent_id).to.equal('booking-service')
    expect(withAttributes({}, {resource: {}}).agent_id).to.equal('unknown_service')
    // Empty or non-string candidates are skipped, not used.
    expect(withAttributes({'gen_ai.agent.name': '', 'gen_ai.agent.id': 42}).agent_id).to.equal('booking-service')
    expect(withAttributes({}, {resource: {'service.name': ['x']}}).agent_id).to.equal('unknown_service')
  })

  it('takes action_name from gen_ai.tool.name, else the span name, else unnamed_span', () => {
    expect(withAttributes({'gen_ai.tool.name': 'get_weather'}).action_name).to.equal('get_weather')
    expect(withAttributes({}).action_name).to.equal('execute_tool get_weather')
    expect(withAttributes({'gen_ai.tool.name': ''}, {name: ''}).action_name).to.equal('unnamed_span')
  })

  it('sets action_status error for STATUS_CODE_ERROR only', () => {
    expect(withAttributes({}, {status: {code: 2, message: ''}}).action_status).to.equal('error')
    for (const code of [0, 1, 3])
      expect(withAttributes({}, {status: {code, message: ''}}).action_status).to.equal('success')
  })

  it('timestamps the span start, truncated (not rounded) to milliseconds', () => {
    expect(withAttributes({}).timestamp).to.equal('2023-11-14T22:13:20.123Z')
    // 1700000000.999999999 s is still 20.999, not 21.000
    expect(withAttributes({}, {startTimeUnixNano: 1_700_000_000_999_999_999n}).timestamp).to.equal(
      '2023-11-14T22:13:20.999Z',
    )
    expect(withAttributes({}, {startTimeUnixNano: 1n, endTimeUnixNano: 2n}).timestamp).to.equal(
      '1970-01-01T00:00:00.000Z',
    )
  })

  it('computes duration_ms from start and end with sub-millisecond precision', () => {
    expect(withAttributes({}).duration_ms).to.equal(1500)
    expect(withAttributes({}, {endTimeUnixNano: START + 543_212n}).duration_ms).to.equal(0.543212)
    expect(withAttributes({}, {endTimeUnixNano: START}).duration_ms).to.equal(0)
  })

  it('leaves out what the span does not know: start 0, end before start, empty ids', () => {
    const unknownStart = withAttributes({}, {startTimeUnixNano: 0n})
    expect(unknownStart).to.not.have.any.keys('timestamp', 'duration_ms')
    expect(withAttributes({}, {endTimeUnixNano: 0n})).to.not.have.key('duration_ms')
    expect(withAttributes({}, {endTimeUnixNano: START - 1n})).to.not.have.key('duration_ms')
    const root = withAttributes({}, {traceId: '', spanId: '', parentSpanId: ''})
    expect(root).to.not.have.any.keys('trace_id', 'span_id', 'parent_id')
    // What the SDK dropped, and the trace flags, are kept in metadata (only when not zero).
    const dropped = spanToEventBody(span({dropped: {attributes: 3, events: 0, links: 1}, flags: 0x301}))
      .metadata as Record<string, unknown>
    expect(dropped).to.include({dropped_attributes_count: 3, dropped_links_count: 1, flags: 0x301})
    expect(dropped).to.not.have.any.keys('dropped_events_count')
    expect(spanToEventBody(span()).metadata).to.not.have.any.keys(
      'flags',
      'dropped_attributes_count',
      'dropped_events_count',
      'dropped_links_count',
    )
    // W3C Trace Context: an all-zero span id is invalid, so such a parent means a root span.
    expect(withAttributes({}, {parentSpanId: '0000000000000000'})).to.not.have.key('parent_id')
    expect(withAttributes({})).to.include({
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      span_id: '00f067aa0ba902b7',
      parent_id: '53995c3f42cd8ad8',
    })
  })

  it('truncates agent_id and action_name to 256 code points without splitting a surrogate pair', () => {
    const long = 'a'.repeat(300)
    expect(withAttributes({'gen_ai.agent.name': long}).agent_id).to.equal('a'.repeat(256))
    const emoji = '✈️🧳'.repeat(200) // U+2708 U+FE0F U+1F9F3: 3 code points, 4 UTF-16 units each
    const name = withAttributes({'gen_ai.tool.name': emoji}).action_name as string
    expect([...name]).to.have.length(256)
    expect(emoji.startsWith(name)).to.equal(true)
    expect(name.at(-1)).to.equal('✈') // 256 = 3 * 85 + 1
  })

  it('shows control characters of agent_id and action_name as U+FFFD', () => {
    const body = withAttributes({'gen_ai.agent.name': 'a\u0000b\u001f', 'gen_ai.tool.name': 'line\nbreak\u007f\u0085'})
    expect(body.agent_id).to.equal('a\uFFFDb\uFFFD')
    // U+0085 is not one of the control characters docs/api.md forbids (C0 and DEL).
    expect(body.action_name).to.equal('line\uFFFDbreak\uFFFD\uFFFD')
  })

  it('fills error from the status message, else the first exception event, for ERROR spans only', () => {
    const exception = {
      timeUnixNano: START,
      name: 'exception',
      attributes: {'exception.message': 'card declined', 'exception.type': 'Error'},
    }
    expect(withAttributes({}, {status: {code: 2, message: 'quota exceeded'}, events: [exception]}).error).to.equal(
      'quota exceeded',
    )
    expect(withAttributes({}, {status: {code: 2, message: ''}, events: [exception]}).error).to.equal('card declined')
    expect(withAttributes({}, {status: {code: 2, message: ''}})).to.not.have.key('error')
    expect(withAttributes({}, {status: {code: 1, message: 'fine'}, events: [exception]})).to.not.have.key('error')
    expect(withAttributes({}, {status: {code: 2, message: 'x'.repeat(9000)}}).error).to.equal('x'.repeat(8192))
  })

  it('labels the scope name and service name, truncated to 1024 code points', () => {
    expect(withAttributes({}).labels).to.deep.equal({
      'otel.scope.name': 'agent-framework',
      'service.name': 'booking-service',
      'atrail.agent_source': 'service',
    })
    const bare = withAttributes({}, {resource: {}, scope: {name: '', version: '', attributes: {}}})
    expect(bare.labels).to.deep.equal({'atrail.agent_source': 'default'})
    const long = withAttributes({}, {resource: {'service.name': 's'.repeat(2000)}}).labels as Record<string, string>
    expect(long['service.name']).to.equal('s'.repeat(1024))
  })

  it('puts everything else in metadata, with exact nanosecond times', () => {
    const body = spanToEventBody(
      span({
        kind: 3,
        traceState: 'vendor=1',
        attributes: {'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 100},
        scope: {name: 'agent-framework', version: '1.4.2', attributes: {lib: true}},
        events: [{timeUnixNano: START + 1n, name: 'token', attributes: {n: 1}}],
        links: [
          {traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceState: '', attributes: {}},
          {traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceState: 'k=v', attributes: {why: 'retry'}},
        ],
        status: {code: 1, message: 'all good'},
      }),
    )
    expect(body.metadata).to.deep.equal({
      span_name: 'execute_tool get_weather',
      span_kind: 'client',
      status_code: 'ok',
      status_message: 'all good',
      start_time_unix_nano: '1700000000123456789',
      end_time_unix_nano: '1700000001623456789',
      trace_state: 'vendor=1',
      attributes: {'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 100},
      resource: {'service.name': 'booking-service'},
      scope: {name: 'agent-framework', version: '1.4.2', attributes: {lib: true}},
      events: [{name: 'token', time_unix_nano: '1700000000123456790', attributes: {n: 1}}],
      links: [
        {trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), attributes: {}},
        {trace_id: 'c'.repeat(32), span_id: 'd'.repeat(16), trace_state: 'k=v', attributes: {why: 'retry'}},
      ],
    })
    // Unknown enum values stay numbers; no events or links, no keys for them.
    const odd = spanToEventBody(span({kind: 9, status: {code: 5, message: ''}})).metadata as Record<string, unknown>
    expect(odd).to.include({span_kind: 9, status_code: 5})
    expect(odd).to.not.have.any.keys('events', 'links', 'status_message', 'trace_state')
  })

  it('produces only client fields, in a body the event validator accepts for any span (property)', () => {
    // Short strings of any code points (controls, astral), and long repetitions of them.
    const text = fc.oneof(
      fc.string({unit: 'binary', maxLength: 8}),
      fc
        .tuple(fc.string({unit: 'binary', minLength: 1, maxLength: 3}), fc.integer({min: 80, max: 300}))
        .map(([s, n]) => s.repeat(n)),
    )
    const hex = (bytes: number) =>
      fc.uint8Array({minLength: bytes, maxLength: bytes}).map((b) => Buffer.from(b).toString('hex'))
    const attributeMap = fc.dictionary(
      fc.string({maxLength: 20}),
      fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
      {maxKeys: 4},
    )
    const anySpan = fc.record({
      resource: fc.oneof(attributeMap, fc.record({'service.name': fc.oneof(text, fc.integer())})),
      scope: fc.record({name: text, version: text, attributes: attributeMap}),
      traceId: fc.oneof(fc.constant(''), hex(16)),
      spanId: fc.oneof(fc.constant(''), hex(8)),
      parentSpanId: fc.oneof(fc.constant(''), hex(8)),
      traceState: text,
      name: text,
      kind: fc.integer({min: -1, max: 9}),
      startTimeUnixNano: fc.bigInt({min: 0n, max: 2n ** 64n - 1n}),
      endTimeUnixNano: fc.bigInt({min: 0n, max: 2n ** 64n - 1n}),
      attributes: fc.record(
        {
          'gen_ai.agent.name': text,
          'gen_ai.agent.id': text,
          'gen_ai.operation.name': fc.constantFrom('chat', 'execute_tool', 'x'),
          'gen_ai.tool.name': text,
        },
        {requiredKeys: []},
      ),
      events: fc.array(
        fc.record({
          timeUnixNano: fc.bigInt({min: 0n, max: 2n ** 64n - 1n}),
          name: fc.constantFrom('exception', 'e'),
          attributes: fc.record({'exception.message': text}, {requiredKeys: []}),
        }),
        {maxLength: 2},
      ),
      links: fc.constant([]),
      status: fc.record({code: fc.integer({min: 0, max: 3}), message: fc.oneof(text, fc.constant('m'.repeat(9000)))}),
      dropped: fc.record({attributes: fc.nat(), events: fc.nat(), links: fc.nat()}),
      flags: fc.nat({max: 0xffffffff}),
    }) as fc.Arbitrary<DecodedSpan>
    const allowed = [
      'agent_id',
      'action_type',
      'action_name',
      'action_status',
      'timestamp',
      'labels',
      'trace_id',
      'span_id',
      'parent_id',
      'metadata',
      'error',
      'duration_ms',
    ]
    fc.assert(
      fc.property(anySpan, (decoded) => {
        const body = spanToEventBody(decoded)
        expect(Object.keys(body).every((key) => allowed.includes(key))).to.equal(true)
        const {event} = validateEvent(body, {
          now: new Date(0),
          generateId: () => '01890a5d-ac96-774b-bcce-b302099a8057',
        })
        expect(event.agent_id).to.equal(body.agent_id)
        expect(event.action_name).to.equal(body.action_name)
        if (body.timestamp !== undefined) expect(event.timestamp).to.equal(body.timestamp)
      }),
      {numRuns: 100},
    )
  })
})
