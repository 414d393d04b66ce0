import {expect} from 'chai'
import {thrownAuditError as thrown} from '../../support/errors.js'
import fc from 'fast-check'
import {AuditError} from '../../../src/core/errors.js'
import {MAX_ANY_VALUE_DEPTH, decodeAnyValue, decodeAttributes} from '../../../src/core/otlp/any-value.js'
import type {Json} from '../../../src/core/types.js'

describe('core/otlp/any-value (common.proto AnyValue -> JSON)', () => {
  it('decodes each scalar member of the oneof', () => {
    expect(decodeAnyValue({stringValue: 'Lisbon'}, 'v')).to.equal('Lisbon')
    expect(decodeAnyValue({stringValue: ''}, 'v')).to.equal('')
    expect(decodeAnyValue({boolValue: true}, 'v')).to.equal(true)
    expect(decodeAnyValue({boolValue: false}, 'v')).to.equal(false)
    expect(decodeAnyValue({doubleValue: 0.25}, 'v')).to.equal(0.25)
    expect(decodeAnyValue({doubleValue: '2.5e-3'}, 'v')).to.equal(0.0025)
    // RFC 4648 section 10 test vector: BASE64("foobar") = "Zm9vYmFy"; URL-safe and unpadded input is normalised.
    expect(decodeAnyValue({bytesValue: 'Zm9vYmFy'}, 'v')).to.equal('Zm9vYmFy')
    expect(decodeAnyValue({bytesValue: '-_8'}, 'v')).to.equal('+/8=')
  })

  it('decodes int64 as a number when safe and as an exact decimal string otherwise', () => {
    expect(decodeAnyValue({intValue: 100}, 'v')).to.equal(100)
    expect(decodeAnyValue({intValue: '100'}, 'v')).to.equal(100)
    expect(decodeAnyValue({intValue: '-9007199254740991'}, 'v')).to.equal(-9007199254740991)
    // 2^53 + 1 = 9007199254740993 is the first integer a double cannot hold.
    expect(decodeAnyValue({intValue: '9007199254740993'}, 'v')).to.equal('9007199254740993')
    // int64 bounds: -2^63 and 2^63 - 1.
    expect(decodeAnyValue({intValue: '-9223372036854775808'}, 'v')).to.equal('-9223372036854775808')
    expect(decodeAnyValue({intValue: '9223372036854775807'}, 'v')).to.equal('9223372036854775807')
    // The JS SDK writes any integral number as intValue, even beyond int64: kept exactly as that double.
    expect(decodeAnyValue({intValue: 1e20}, 'v')).to.equal('100000000000000000000')
  })

  it('refuses int64 strings that are not integers or out of range', () => {
    for (const bad of ['9223372036854775808', '1.5', 'abc', '', ' 1', 1.5, true]) {
      const error = thrown(() => decodeAnyValue({intValue: bad}, 'attributes[0].value'))
      expect(error.code).to.equal('validation_error')
      expect(error.details?.[0]?.field).to.equal('attributes[0].value.intValue')
    }
  })

  it('writes non-finite doubles as the proto3 JSON strings, from numbers or strings', () => {
    expect(decodeAnyValue({doubleValue: NaN}, 'v')).to.equal('NaN')
    expect(decodeAnyValue({doubleValue: 'Infinity'}, 'v')).to.equal('Infinity')
    expect(decodeAnyValue({doubleValue: -Infinity}, 'v')).to.equal('-Infinity')
    expect(() => decodeAnyValue({doubleValue: 'fast'}, 'v')).to.throw(AuditError, 'v.doubleValue must be a number')
  })

  it('decodes arrays and kvlists recursively, and empty values as null', () => {
    const value = {
      kvlistValue: {
        values: [
          {key: 'list', value: {arrayValue: {values: [{intValue: '1'}, {}, {stringValue: 'x'}]}}},
          {key: 'empty', value: {arrayValue: {}}},
          {key: 'nested', value: {kvlistValue: {values: [{key: 'ok', value: {boolValue: true}}]}}},
          {key: 'missing'},
        ],
      },
    }
    expect(decodeAnyValue(value, 'v')).to.deep.equal({
      list: [1, null, 'x'],
      empty: [],
      nested: {ok: true},
      missing: null,
    })
    expect(decodeAnyValue({}, 'v')).to.equal(null)
    expect(decodeAnyValue(null, 'v')).to.equal(null)
  })

  it('takes the first oneof member in common.proto order when a sender sets several', () => {
    expect(decodeAnyValue({intValue: '7', stringValue: 'seven'}, 'v')).to.equal('seven')
    // null is an absent field in proto3 JSON, so the next member is used.
    expect(decodeAnyValue({stringValue: null, boolValue: true}, 'v')).to.equal(true)
  })

  it('keeps attribute keys such as __proto__ as plain data; the last duplicate wins', () => {
    const attributes = decodeAttributes(
      [
        {key: '__proto__', value: {stringValue: 'polluted?'}},
        {key: 'constructor', value: {intValue: 1}},
        {key: 'a', value: {intValue: 1}},
        {key: 'a', value: {intValue: 2}},
      ],
      'attributes',
    )
    expect(Object.getPrototypeOf(attributes)).to.equal(Object.prototype)
    expect(Object.keys(attributes)).to.deep.equal(['__proto__', 'constructor', 'a'])
    expect(JSON.parse(JSON.stringify(attributes))).to.deep.equal(
      JSON.parse('{"__proto__":"polluted?","constructor":1,"a":2}'),
    )
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
  })

  it('replaces unpaired surrogates (possible in JSON text) with U+FFFD in keys and values', () => {
    const attributes = decodeAttributes([{key: 'k\uD800', value: {stringValue: 'a\uDC00b'}}], 'attributes')
    expect(attributes).to.deep.equal({'k\uFFFD': 'a\uFFFDb'})
  })

  it(`refuses values nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`, () => {
    const nest = (levels: number): unknown =>
      levels === 0 ? {stringValue: 'leaf'} : {arrayValue: {values: [nest(levels - 1)]}}
    let expected: Json = 'leaf'
    for (let i = 0; i < MAX_ANY_VALUE_DEPTH; i++) expected = [expected]
    expect(decodeAnyValue(nest(MAX_ANY_VALUE_DEPTH), 'v')).to.deep.equal(expected)
    const error = thrown(() => decodeAnyValue(nest(MAX_ANY_VALUE_DEPTH + 1), 'v'))
    expect(error.message).to.match(/must not be nested deeper than 32 levels$/)
  })

  it('names the path of a malformed part', () => {
    expect(() => decodeAttributes({}, 'span.attributes')).to.throw(AuditError, 'span.attributes must be an array')
    expect(() => decodeAttributes([7], 'span.attributes')).to.throw(AuditError, 'span.attributes[0] must be an object')
    expect(() => decodeAttributes([{key: 1}], 'a')).to.throw(AuditError, 'a[0].key must be a string')
    expect(() => decodeAnyValue({arrayValue: {values: {}}}, 'a')).to.throw(
      AuditError,
      'a.arrayValue.values must be an array',
    )
    expect(() => decodeAnyValue({boolValue: 'true'}, 'a')).to.throw(AuditError, 'a.boolValue must be a boolean')
    expect(() => decodeAnyValue({bytesValue: 'not base64!'}, 'a')).to.throw(AuditError, 'a.bytesValue must be base64')
    expect(() => decodeAnyValue([], 'a')).to.throw(AuditError, 'a must be an object')
  })

  it('round-trips any JSON-representable value through a naive OTLP/JSON encoder (property)', () => {
    // Naive reference encoder, written from the AnyValue table of common.proto.
    const encode = (value: Json): unknown => {
      if (value === null) return {}
      if (typeof value === 'string') return {stringValue: value}
      if (typeof value === 'boolean') return {boolValue: value}
      if (typeof value === 'number') return Number.isInteger(value) ? {intValue: String(value)} : {doubleValue: value}
      if (Array.isArray(value)) return {arrayValue: {values: value.map(encode)}}
      return {kvlistValue: {values: Object.entries(value).map(([key, v]) => ({key, value: encode(v)}))}}
    }
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        {depthSize: 'small', withCrossShrink: true},
        fc.constant(null),
        fc.string({unit: 'binary', maxLength: 8}),
        fc.boolean(),
        fc.maxSafeInteger(),
        fc.double({noNaN: true, noDefaultInfinity: true}).filter((d) => !Number.isInteger(d)),
        fc.array(tie('value'), {maxLength: 4}),
        fc.dictionary(fc.string({unit: 'binary', maxLength: 8}), tie('value'), {maxKeys: 4, noNullPrototype: true}),
      ),
    })).value as fc.Arbitrary<Json>
    fc.assert(
      fc.property(json, (value) => {
        const normalised = JSON.parse(JSON.stringify(value)) as Json // -0 -> 0, as JSON text would carry it
        expect(decodeAnyValue(encode(normalised), 'v')).to.deep.equal(normalised)
      }),
      {numRuns: 200, seed: 1},
    )
  })
})
