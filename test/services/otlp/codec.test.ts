import {expect} from 'chai'
import {AuditError} from '../../../src/core/errors.js'
import {decodeTraceRequest, encodeTraceResponse, parseOtlpContentType} from '../../../src/services/otlp/codec.js'
import {decodeProtobufTraceResponse} from '../../../src/services/otlp/protobuf.js'

describe('services/otlp/codec (OTLP/HTTP encodings)', () => {
  it('reads the encoding from Content-Type, ignoring parameters and case', () => {
    expect(parseOtlpContentType('application/json')).to.equal('json')
    expect(parseOtlpContentType('Application/JSON; charset=utf-8')).to.equal('json')
    expect(parseOtlpContentType('application/x-protobuf')).to.equal('protobuf')
    expect(parseOtlpContentType('application/protobuf')).to.equal('protobuf')
  })

  it('answers unsupported_media_type (415) for anything else', () => {
    for (const contentType of [
      undefined,
      '',
      'text/plain',
      'application/grpc',
      'application/jsonx',
      'application/x-www-form-urlencoded',
    ]) {
      try {
        parseOtlpContentType(contentType)
        expect.fail(`accepted ${contentType}`)
      } catch (error) {
        expect(error).to.be.instanceOf(AuditError)
        expect((error as AuditError).code).to.equal('unsupported_media_type')
        expect((error as AuditError).status).to.equal(415)
      }
    }
  })

  it('dispatches on the encoding: the same bytes are JSON for one and protobuf for the other', () => {
    const json = new TextEncoder().encode('{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"n"}]}]}]}')
    expect(decodeTraceRequest(json, 'json').spans.map((s) => s.name)).to.deep.equal(['n'])
    // "{" is 0x7b: field 15, wire type 3 (start group), which OTLP never uses.
    expect(() => decodeTraceRequest(json, 'protobuf')).to.throw(AuditError, /not a valid protobuf/)
    expect(() => decodeTraceRequest(new Uint8Array([0x0a, 0x00]), 'json')).to.throw(AuditError, /not valid JSON/)
  })

  it('answers full success with an empty ExportTraceServiceResponse', () => {
    expect(encodeTraceResponse({rejectedSpans: 0}, 'json')).to.deep.equal({body: '{}', contentType: 'application/json'})
    expect(encodeTraceResponse({rejectedSpans: 0, errorMessage: ''}, 'json').body).to.equal('{}')
    const protobuf = encodeTraceResponse({rejectedSpans: 0}, 'protobuf')
    expect(protobuf.contentType).to.equal('application/x-protobuf')
    expect((protobuf.body as Uint8Array).length).to.equal(0)
  })

  it('answers partial_success with rejected_spans (an int64, a string in JSON) and the message', () => {
    const json = encodeTraceResponse({rejectedSpans: 2, errorMessage: '2 of 3 spans rejected'}, 'json')
    expect(JSON.parse(json.body as string)).to.deep.equal({
      partialSuccess: {rejectedSpans: '2', errorMessage: '2 of 3 spans rejected'},
    })
    const protobuf = encodeTraceResponse({rejectedSpans: 2, errorMessage: '2 of 3 spans rejected'}, 'protobuf')
    expect(decodeProtobufTraceResponse(protobuf.body as Uint8Array)).to.deep.equal({
      partialSuccess: {rejectedSpans: '2', errorMessage: '2 of 3 spans rejected'},
    })
  })

  it('sends a message with nothing rejected as a warning, as the OTLP spec allows', () => {
    const json = encodeTraceResponse({rejectedSpans: 0, errorMessage: 'metadata truncated'}, 'json')
    expect(JSON.parse(json.body as string)).to.deep.equal({
      partialSuccess: {rejectedSpans: '0', errorMessage: 'metadata truncated'},
    })
  })
})
