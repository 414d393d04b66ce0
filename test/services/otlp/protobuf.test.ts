import {expect} from 'chai'
import {thrownAuditError as thrown} from '../../support/errors.js'
import fc from 'fast-check'
import {JsonTraceSerializer, ProtobufTraceSerializer} from '@opentelemetry/otlp-transformer'
import {resourceFromAttributes} from '@opentelemetry/resources'
import type {ReadableSpan} from '@opentelemetry/sdk-trace'
import {AuditError} from '../../../src/core/errors.js'
import type {Json} from '../../../src/core/types.js'
import {decodeTraceRequest} from '../../../src/services/otlp/codec.js'
import {
  decodeProtobufTraceRequest,
  decodeProtobufTraceResponse,
  encodeProtobufTraceResponse,
} from '../../../src/services/otlp/protobuf.js'

// A naive protobuf writer (https://protobuf.dev/programming-guides/encoding/), only for building
// known inputs: tag = field << 3 | wire type; varints little-endian base 128; negative int64 as
// 10-byte two's complement.
const LEN = 2
const I64 = 1
function varint(value: bigint): number[] {
  let v = BigInt.asUintN(64, value)
  const out: number[] = []
  do {
    const low = Number(v & 0x7fn)
    v >>= 7n
    out.push(v > 0n ? low | 0x80 : low)
  } while (v > 0n)
  return out
}
const tag = (field: number, wire: number) => varint(BigInt((field << 3) | wire))
const len = (field: number, bytes: number[]) => [...tag(field, LEN), ...varint(BigInt(bytes.length)), ...bytes]
const text = (field: number, value: string) => len(field, [...Buffer.from(value, 'utf8')])
const fixed64 = (field: number, value: bigint) => [
  ...tag(field, I64),
  ...Buffer.from(new BigUint64Array([value]).buffer),
]
const double = (field: number, value: number) => [...tag(field, I64), ...Buffer.from(new Float64Array([value]).buffer)]
const keyValue = (field: number, key: string, anyValue: number[]) => len(field, [...text(1, key), ...len(2, anyValue)])
const hexBytes = (hex: string) => [...Buffer.from(hex, 'hex')]

/** ExportTraceServiceRequest{resource_spans{scope_spans{spans: [span]}}} */
const request = (span: number[]) => Uint8Array.from(len(1, len(2, len(2, span))))

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736' // W3C Trace Context example ids
const SPAN_ID = '00f067aa0ba902b7'

describe('services/otlp/protobuf (binary ExportTraceServiceRequest / Response)', () => {
  it('decodes a hand-assembled span with every AnyValue kind (known answer)', () => {
    const span = [
      ...len(1, hexBytes(TRACE_ID)),
      ...len(2, hexBytes(SPAN_ID)),
      ...text(5, 'tool call'),
      ...tag(6, 0),
      ...varint(3n), // kind CLIENT
      ...fixed64(7, 1_700_000_000_123_456_789n),
      ...fixed64(8, 1_700_000_001_623_456_789n),
      ...keyValue(9, 'neg', [...tag(3, 0), ...varint(-1n)]),
      ...keyValue(9, 'max', [...tag(3, 0), ...varint(2n ** 63n - 1n)]),
      ...keyValue(9, 'nan', double(4, NaN)),
      ...keyValue(9, 'half', double(4, 0.5)),
      ...keyValue(9, 'off', [...tag(2, 0), 0]),
      ...keyValue(9, 'empty', []),
      ...keyValue(9, 'raw', len(7, [0, 1, 2, 255])),
      ...keyValue(9, 'list', len(5, [...len(1, text(1, 'a')), ...len(1, [...tag(3, 0), 7])])),
      ...keyValue(9, 'map', len(6, keyValue(1, 'inner', text(1, 'x')))),
      ...tag(10, 0),
      ...varint(3n), // dropped_attributes_count
      ...tag(12, 0),
      ...varint(5n), // dropped_events_count
      ...tag(14, 0),
      ...varint(1n), // dropped_links_count
      ...len(15, [...text(2, 'denied'), ...tag(3, 0), 2]),
      ...tag(16, 5),
      0x01,
      0x03,
      0x00,
      0x00, // flags (fixed32 0x301: sampled, parent known remote)
    ]
    // -1 as int64 is the 10-byte varint ff ff ff ff ff ff ff ff ff 01.
    expect(varint(-1n)).to.deep.equal([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])
    const {spans} = decodeProtobufTraceRequest(request(span))
    expect(spans).to.have.length(1)
    expect(spans[0]).to.deep.include({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      parentSpanId: '',
      name: 'tool call',
      kind: 3,
      startTimeUnixNano: 1_700_000_000_123_456_789n,
      endTimeUnixNano: 1_700_000_001_623_456_789n,
      status: {code: 2, message: 'denied'},
      dropped: {attributes: 3, events: 5, links: 1},
      flags: 0x301,
      resource: {},
      scope: {name: '', version: '', attributes: {}},
    })
    expect(spans[0]!.attributes).to.deep.equal({
      neg: -1,
      max: '9223372036854775807',
      nan: 'NaN',
      half: 0.5,
      off: false,
      empty: null,
      raw: 'AAEC/w==', // printf '\x00\x01\x02\xff' | base64
      list: ['a', 7],
      map: {inner: 'x'},
    })
  })

  it("decodes what the SDK's serializers write for any attribute values, the same in both encodings (property)", () => {
    const scalar = fc.oneof(
      fc.string({unit: 'binary', maxLength: 8}),
      fc.boolean(),
      fc.maxSafeInteger(),
      fc.constantFrom(2 ** 60, -(2 ** 62)),
      fc.double({noNaN: true, noDefaultInfinity: true}).filter((d) => !Number.isInteger(d)),
      fc.uint8Array({maxLength: 6}),
    )
    const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      any: fc.oneof(
        {depthSize: 'small'},
        scalar,
        fc.array(tie('any'), {maxLength: 3}),
        fc.dictionary(fc.string({maxLength: 5}), tie('any'), {maxKeys: 3}),
      ),
    })).any
    // What the receiver must make of each value (the table of src/core/otlp/any-value.ts).
    const expected = (v: unknown): Json => {
      if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
      if (typeof v === 'number') return Number.isSafeInteger(v) ? v + 0 : Number.isInteger(v) ? BigInt(v).toString() : v
      if (Array.isArray(v)) return v.map(expected)
      if (typeof v === 'object' && v !== null)
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expected(x)]))
      return v as Json
    }
    fc.assert(
      fc.property(fc.dictionary(fc.string({maxLength: 8}), value, {maxKeys: 4}), (attributes) => {
        const spans = [fakeSpan(attributes)]
        const fromProtobuf = decodeTraceRequest(ProtobufTraceSerializer.serializeRequest(spans)!, 'protobuf')
        const fromJson = decodeTraceRequest(JsonTraceSerializer.serializeRequest(spans)!, 'json')
        expect(fromProtobuf.spans[0]!.attributes).to.deep.equal(expected(attributes))
        expect(fromJson).to.deep.equal(fromProtobuf)
      }),
      {numRuns: 100},
    )
  })

  it('refuses malformed protobuf as validation_error, whatever the bytes (property)', () => {
    const valid = [...request([...len(1, hexBytes(TRACE_ID)), ...text(5, 'n')])]
    const cases: Array<[number[], RegExp]> = [
      [valid.slice(0, -1), /index out of range/], // truncated
      [[0x0f], /invalid wire type 7/], // field 1, wire type 7 does not exist
      [[0x0a, 0x05, 0x01], /index out of range/], // length 5, one byte present
    ]
    for (const [bytes, reason] of cases) {
      const error = thrown(() => decodeProtobufTraceRequest(Uint8Array.from(bytes)))
      expect(error.code).to.equal('validation_error')
      expect(error.message).to.match(/^the body is not a valid protobuf ExportTraceServiceRequest: /)
      expect(error.message).to.match(reason)
    }
    fc.assert(
      fc.property(fc.uint8Array({maxLength: 64}), (bytes) => {
        try {
          decodeProtobufTraceRequest(bytes)
        } catch (error) {
          expect(error).to.be.instanceOf(AuditError)
        }
      }),
      {numRuns: 300},
    )
  })

  it('refuses nesting beyond the protobufjs recursion limit and ids of the wrong size', () => {
    let nested: number[] = text(1, 'leaf')
    for (let i = 0; i < 120; i++) nested = len(5, len(1, nested)) // array_value { values { ... } }
    const deep = thrown(() => decodeProtobufTraceRequest(request(keyValue(9, 'deep', nested))))
    expect(deep.message).to.match(/max depth exceeded/)
    const shortId = thrown(() => decodeProtobufTraceRequest(request(len(1, [1, 2, 3]))))
    expect(shortId.message).to.equal('resourceSpans[0].scopeSpans[0].spans[0].traceId must be 16 bytes')
  })

  it('reads an empty body as an empty request, which OTLP answers with success', () => {
    expect(decodeProtobufTraceRequest(new Uint8Array(0))).to.deep.equal({spans: []})
  })

  it('encodes ExportTraceServiceResponse: empty on success, partial_success otherwise (known answer)', () => {
    expect([...encodeProtobufTraceResponse()]).to.deep.equal([])
    // partial_success (field 1, LEN 5) { rejected_spans (1, varint) = 3, error_message (2, LEN 1) = "x" }
    const bytes = encodeProtobufTraceResponse({rejectedSpans: 3, errorMessage: 'x'})
    expect(Buffer.from(bytes).toString('hex')).to.equal('0a050803120178')
    expect(decodeProtobufTraceResponse(bytes)).to.deep.equal({partialSuccess: {rejectedSpans: '3', errorMessage: 'x'}})
    expect(ProtobufTraceSerializer.deserializeResponse(bytes)).to.deep.equal({
      partialSuccess: {rejectedSpans: 3, errorMessage: 'x'},
    })
  })
})

/** A finished span as the SDK's serializers read it, with attribute values the SDK API would not accept. */
function fakeSpan(attributes: Record<string, unknown>): ReadableSpan {
  return {
    name: 'property',
    kind: 0,
    spanContext: () => ({traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1}),
    parentSpanContext: undefined,
    startTime: [1_700_000_000, 0],
    endTime: [1_700_000_001, 0],
    duration: [1, 0],
    ended: true,
    status: {code: 0},
    attributes,
    links: [],
    events: [],
    resource: resourceFromAttributes({'service.name': 'property'}),
    instrumentationScope: {name: 'property'},
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as ReadableSpan
}
