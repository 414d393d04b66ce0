import {expect} from 'chai'
import canonicalize from 'canonicalize'
import fc from 'fast-check'
import {checkJsonValue, jsonEqual} from '../../../src/core/event/json.js'
import {jsonValue} from './arbitraries.js'

describe('free-form JSON values', () => {
  it('accepts every JSON value RFC 8785 can canonicalise', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(checkJsonValue(value)).to.equal(undefined)
        expect(canonicalize(value)).to.be.a('string')
      }),
    )
  })

  it('names where a value cannot be hashed', () => {
    expect(checkJsonValue({a: [1, {'b c': '\ud800'}]})).to.equal('contains an unpaired surrogate at $.a[1]["b c"]')
    expect(checkJsonValue([Number.NEGATIVE_INFINITY])).to.equal('contains a non-finite number at $[0]')
    expect(checkJsonValue({f: () => 1})).to.equal('contains a value that is not JSON at $.f')
    expect(checkJsonValue(new Map())).to.equal('contains a value that is not JSON at $')
    expect(checkJsonValue(Object.create(null))).to.equal(undefined)
  })

  it('compares like the canonical forms do (a naive reference)', () => {
    const pair = fc.oneof(
      fc.tuple(jsonValue, jsonValue),
      jsonValue.map((value) => [value, JSON.parse(JSON.stringify(value))] as const),
    )
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(jsonEqual(a, b)).to.equal(canonicalize(a) === canonicalize(b))
      }),
    )
  })

  it('ignores key order and treats odd keys as data', () => {
    expect(jsonEqual(JSON.parse('{"a":1,"b":[2,{"c":null}]}'), JSON.parse('{"b":[2,{"c":null}],"a":1}'))).to.equal(true)
    expect(jsonEqual(JSON.parse('{"__proto__":1}'), {})).to.equal(false)
    expect(jsonEqual({}, JSON.parse('{"__proto__":1}'))).to.equal(false)
    expect(jsonEqual({a: undefined}, {b: undefined})).to.equal(false)
    expect(jsonEqual([1, 2], {0: 1, 1: 2})).to.equal(false)
    expect(jsonEqual(-0, 0)).to.equal(true)
    expect(jsonEqual(null, {})).to.equal(false)
  })
})
