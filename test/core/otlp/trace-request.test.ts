import {expect} from 'chai'
import {thrownAuditError as thrown} from '../../support/errors.js'
import fc from 'fast-check'
import {AuditError} from '../../../src/core/errors.js'
import {decodeJsonTraceRequest, normaliseTraceRequest} from '../../../src/core/otlp/trace-request.js'

const TRACE_ID = '5B8EFFF798038103D269B633813FC60C' // the example of the OTLP spec, "JSON Protobuf Encoding"
const SPAN_ID = 'EEE19B7EC3C1B174'
const PARENT_ID = 'eee19b7ec3c1b173'

/** A request in the shape of the OTLP/JSON example of opentelemetry-proto (examples/trace.json). */
function request(span: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    resourceSpans: [
      {
        resource: {attributes: [{key: 'service.name', value: {stringValue: 'my.service'}}]},
        scopeSpans: [
          {
            scope: {
              name: 'my.library',
              version: '1.0.0',
              attributes: [{key: 'my.scope.attribute', value: {stringValue: 'some scope attribute'}}],
            },
            spans: [
              {
                traceId: TRACE_ID,
                spanId: SPAN_ID,
                parentSpanId: PARENT_ID,
                name: "I'm a server span",
                startTimeUnixNano: '1544712660000000000',
                endTimeUnixNano: 1544712661000000000,
                kind: 2,
                attributes: [{key: 'my.span.attr', value: {stringValue: 'some value'}}],
                ...span,
              },
            ],
          },
        ],
      },
    ],
  }
}

function encode(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value))
}

describe('core/otlp/trace-request (ExportTraceServiceRequest, OTLP/JSON)', () => {
  it('normalises the spec example: ids lower-cased, times exact, resource and scope attached', () => {
    const {spans} = decodeJsonTraceRequest(encode(request()))
    expect(spans).to.have.length(1)
    expect(spans[0]).to.deep.equal({
      resource: {'service.name': 'my.service'},
      scope: {name: 'my.library', version: '1.0.0', attributes: {'my.scope.attribute': 'some scope attribute'}},
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      parentSpanId: PARENT_ID,
      traceState: '',
      name: "I'm a server span",
      kind: 2,
      startTimeUnixNano: 1544712660000000000n,
      endTimeUnixNano: 1544712661000000000n,
      attributes: {'my.span.attr': 'some value'},
      events: [],
      links: [],
      status: {code: 0, message: ''},
      dropped: {attributes: 0, events: 0, links: 0},
      flags: 0,
    })
    const [counted] = decodeJsonTraceRequest(
      encode(request({droppedAttributesCount: 2, droppedEventsCount: '3', droppedLinksCount: 4, flags: 769})),
    ).spans
    expect(counted).to.deep.include({dropped: {attributes: 2, events: 3, links: 4}, flags: 769})
    expect(thrown(() => decodeJsonTraceRequest(encode(request({flags: 2 ** 32}))))).to.include({
      code: 'validation_error',
    })
  })

  it('keeps request order across resources and scopes, and shares resource and scope objects', () => {
    const body = {
      resourceSpans: [
        {scopeSpans: [{spans: [{name: 'a'}, {name: 'b'}]}, {scope: {name: 's2'}, spans: [{name: 'c'}]}]},
        {resource: {attributes: [{key: 'r', value: {intValue: 2}}]}, scopeSpans: [{spans: [{name: 'd'}]}]},
      ],
    }
    const {spans} = normaliseTraceRequest(body, 'hex')
    expect(spans.map((s) => s.name)).to.deep.equal(['a', 'b', 'c', 'd'])
    expect(spans[0]!.scope).to.equal(spans[1]!.scope)
    expect(spans[0]!.resource).to.equal(spans[2]!.resource)
    expect(spans[2]!.scope).to.deep.equal({name: 's2', version: '', attributes: {}})
    expect(spans[3]!.resource).to.deep.equal({r: 2})
  })

  it('reads events, links, status and trace state', () => {
    const {spans} = normaliseTraceRequest(
      request({
        traceState: 'vendor=1',
        events: [
          {
            timeUnixNano: '1544712660500000000',
            name: 'exception',
            attributes: [{key: 'exception.message', value: {stringValue: 'boom'}}],
          },
        ],
        links: [{traceId: TRACE_ID, spanId: PARENT_ID, traceState: 't=2', attributes: []}],
        status: {code: 2, message: 'failed'},
      }),
      'hex',
    )
    const span = spans[0]!
    expect(span.traceState).to.equal('vendor=1')
    expect(span.events).to.deep.equal([
      {timeUnixNano: 1544712660500000000n, name: 'exception', attributes: {'exception.message': 'boom'}},
    ])
    expect(span.links).to.deep.equal([
      {traceId: TRACE_ID.toLowerCase(), spanId: PARENT_ID, traceState: 't=2', attributes: {}},
    ])
    expect(span.status).to.deep.equal({code: 2, message: 'failed'})
  })

  it('treats absent, null and empty as defaults: empty ids, zero times, UNSET status', () => {
    for (const body of [{}, {resourceSpans: null}, {resourceSpans: []}]) {
      expect(normaliseTraceRequest(body, 'hex').spans).to.deep.equal([])
    }
    const {spans} = normaliseTraceRequest(
      {resourceSpans: [{scopeSpans: [{spans: [{traceId: '', parentSpanId: null, status: null}]}]}]},
      'hex',
    )
    expect(spans[0]).to.include({traceId: '', spanId: '', parentSpanId: '', name: '', kind: 0, startTimeUnixNano: 0n})
    expect(spans[0]!.status).to.deep.equal({code: 0, message: ''})
  })

  it('reads a body spelled with the proto field names (snake_case) as the Collector does', () => {
    const snake = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(snake)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(
              Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(v)]),
            )
          : value
    const body = snake(
      request({
        attributes: [{key: 'my_attr', value: {kvlist_value: {values: [{key: 'inner_key', value: {int_value: '7'}}]}}}],
      }),
    ) as Record<string, unknown>
    expect(Object.keys(body)).to.deep.equal(['resource_spans'])
    const [span] = decodeJsonTraceRequest(encode(body)).spans
    // Field names are renamed, attribute keys (values of `key`) are not.
    expect(span).to.deep.include({
      spanId: 'eee19b7ec3c1b174',
      parentSpanId: PARENT_ID,
      startTimeUnixNano: 1544712660000000000n,
      attributes: {my_attr: {inner_key: 7}},
    })
    expect(span!.resource).to.deep.equal({'service.name': 'my.service'})
  })

  it('ignores unknown fields, as OTLP/JSON receivers must', () => {
    const {spans} = normaliseTraceRequest(
      {futureField: 1, resourceSpans: [{x: {}, scopeSpans: [{spans: [{name: 'n', flags: 257, newThing: [1]}]}]}]},
      'hex',
    )
    expect(spans[0]!.name).to.equal('n')
  })

  it('accepts 64-bit integers as numbers or strings and unknown enum values', () => {
    const {spans} = normaliseTraceRequest(
      request({startTimeUnixNano: 5, endTimeUnixNano: '18446744073709551615', kind: 9, status: {code: 7}}),
      'hex',
    )
    expect(spans[0]!.startTimeUnixNano).to.equal(5n)
    expect(spans[0]!.endTimeUnixNano).to.equal(2n ** 64n - 1n)
    expect(spans[0]!.kind).to.equal(9)
    expect(spans[0]!.status.code).to.equal(7)
  })

  it('tolerates enum names, which the OTLP/JSON rules forbid senders to use', () => {
    const {spans} = normaliseTraceRequest(
      request({kind: 'SPAN_KIND_CLIENT', status: {code: 'STATUS_CODE_ERROR'}}),
      'hex',
    )
    expect(spans[0]!.kind).to.equal(3)
    expect(spans[0]!.status.code).to.equal(2)
    expect(() => normaliseTraceRequest(request({kind: 'CLIENT'}), 'hex')).to.throw(
      AuditError,
      'kind must be an integer SPAN_KIND_* value',
    )
  })

  it('reads base64 ids (the binary encoding after toObject) as hex', () => {
    // printf '5b8efff798038103d269b633813fc60c' | xxd -r -p | base64  ->  W47/95gDgQPSabYzgT/GDA==
    const {spans} = normaliseTraceRequest(
      request({traceId: 'W47/95gDgQPSabYzgT/GDA==', spanId: '7uGbfsPBsXQ=', parentSpanId: ''}),
      'base64',
    )
    expect(spans[0]).to.include({
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      parentSpanId: '',
    })
    expect(() => normaliseTraceRequest(request({traceId: '', spanId: 'AAAA', parentSpanId: ''}), 'base64')).to.throw(
      AuditError,
      'spans[0].spanId must be 8 bytes',
    )
    expect(() =>
      normaliseTraceRequest(request({traceId: 'W47/95gDgQPSabYz!', spanId: '', parentSpanId: ''}), 'base64'),
    ).to.throw(AuditError, 'spans[0].traceId must be 16 bytes')
  })

  it('refuses ids of the wrong length or not hex, naming the field', () => {
    const base = 'resourceSpans[0].scopeSpans[0].spans[0]'
    const cases: Array<[Record<string, unknown>, string]> = [
      [{traceId: TRACE_ID.slice(2)}, `${base}.traceId must be 32 hex digits (16 bytes)`],
      [{traceId: 'zz' + TRACE_ID.slice(2)}, `${base}.traceId must be 32 hex digits (16 bytes)`],
      [{spanId: SPAN_ID + '00'}, `${base}.spanId must be 16 hex digits (8 bytes)`],
      // Base64 where hex is required: what a generic protobuf JSON encoder would write.
      [{parentSpanId: '7uGbfsPBsXQ='}, `${base}.parentSpanId must be 16 hex digits (8 bytes)`],
      [{traceId: 42}, `${base}.traceId must be a string`],
    ]
    for (const [span, message] of cases) {
      const error = thrown(() => normaliseTraceRequest(request(span), 'hex'))
      expect(error.code).to.equal('validation_error')
      expect(error.message).to.equal(message)
      expect(error.details).to.deep.equal([
        {field: message.split(' ')[0], message: message.slice(message.indexOf(' ') + 1)},
      ])
    }
  })

  it('refuses wrong shapes with the path of the first bad part', () => {
    const cases: Array<[unknown, string]> = [
      [[], 'body must be an object'],
      ['traces', 'body must be an object'],
      [null, 'body must be an ExportTraceServiceRequest object'],
      [{resourceSpans: {}}, 'resourceSpans must be an array'],
      [{resourceSpans: [1]}, 'resourceSpans[0] must be an object'],
      [{resourceSpans: [{scopeSpans: [{spans: [null]}]}]}, 'resourceSpans[0].scopeSpans[0].spans[0] must be an object'],
      [{resourceSpans: [{resource: []}]}, 'resourceSpans[0].resource must be an object'],
      [
        {resourceSpans: [{scopeSpans: [{scope: {name: 3}}]}]},
        'resourceSpans[0].scopeSpans[0].scope.name must be a string',
      ],
      [
        request({startTimeUnixNano: '-1'}),
        'resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano must be an integer from 0 to ' +
          '18446744073709551615 (a number or a decimal string)',
      ],
      [
        request({endTimeUnixNano: '18446744073709551616'}),
        'resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano must be an integer from 0 to ' +
          '18446744073709551615 (a number or a decimal string)',
      ],
      [
        request({events: [{timeUnixNano: 1.5}]}),
        'resourceSpans[0].scopeSpans[0].spans[0].events[0].timeUnixNano must be an integer from 0 to ' +
          '18446744073709551615 (a number or a decimal string)',
      ],
      [request({links: {}}), 'resourceSpans[0].scopeSpans[0].spans[0].links must be an array'],
      [
        request({status: {code: 1.5}}),
        'resourceSpans[0].scopeSpans[0].spans[0].status.code must be an integer STATUS_CODE_* value',
      ],
      [
        request({attributes: [{key: 'k', value: {intValue: 'x'}}]}),
        'resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.intValue must be an integer from ' +
          '-9223372036854775808 to 9223372036854775807 (a number or a decimal string)',
      ],
    ]
    for (const [body, message] of cases) {
      const error = thrown(() => normaliseTraceRequest(body, 'hex'))
      expect(error.code, message).to.equal('validation_error')
      expect(error.message).to.equal(message)
    }
  })

  it('answers invalid_json for a body that is not JSON or not UTF-8', () => {
    for (const body of [
      encode('x').slice(1, 2),
      new TextEncoder().encode('{"resourceSpans": ['),
      new Uint8Array(0),
      new Uint8Array([0x7b, 0xff, 0x7d]),
    ]) {
      const error = thrown(() => decodeJsonTraceRequest(body))
      expect(error.code).to.equal('invalid_json')
      expect(error.status).to.equal(400)
      expect(error.message).to.match(/^the OTLP\/JSON body is not valid JSON: /)
    }
  })

  it('answers invalid_json naming the path of a field given twice, at any depth', () => {
    const text = JSON.stringify(request({name: 'first'})).replace('"name":"first"', '"name":"first","name":"second"')
    const error = thrown(() => decodeJsonTraceRequest(new TextEncoder().encode(text)))
    expect(error.code).to.equal('invalid_json')
    expect(error.message).to.match(
      /^the OTLP\/JSON body has the member \$\.resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.name twice/,
    )
    const root = '{"resourceSpans":[],"resource_spans":[],"resourceSpans":[]}'
    expect(thrown(() => decodeJsonTraceRequest(new TextEncoder().encode(root))).message).to.contain(
      'the member $.resourceSpans twice',
    )
  })

  it('accepts a UTF-8 byte order mark and non-ASCII text', () => {
    const text = '\uFEFF' + JSON.stringify(request({name: 'réserver ✈️'}))
    expect(decodeJsonTraceRequest(new TextEncoder().encode(text)).spans[0]!.name).to.equal('réserver ✈️')
  })

  it('either decodes or throws AuditError for any JSON value in any position (property)', () => {
    const anyJson = fc.jsonValue({maxDepth: 3})
    const shaped = fc.record(
      {
        traceId: fc.oneof(anyJson, fc.constant(TRACE_ID)),
        name: anyJson,
        kind: anyJson,
        startTimeUnixNano: anyJson,
        attributes: fc.oneof(anyJson, fc.array(fc.record({key: anyJson, value: anyJson}), {maxLength: 3})),
        status: fc.oneof(anyJson, fc.record({code: anyJson})),
        events: anyJson,
      },
      {requiredKeys: []},
    )
    fc.assert(
      fc.property(
        fc.oneof(
          anyJson,
          shaped.map((span) => request(span)),
        ),
        (body) => {
          try {
            normaliseTraceRequest(body, 'hex')
          } catch (error) {
            expect(error).to.be.instanceOf(AuditError)
          }
        },
      ),
      {numRuns: 300},
    )
  })
})
