import {expect} from 'chai'
import canonicalize from 'canonicalize'
import fc from 'fast-check'
import {canonicalizeEvent} from '../../../src/core/event/canonical.js'
import type {HashedContent} from '../../../src/core/types.js'
import {hashedContent} from './arbitraries.js'

function sample(overrides: Partial<HashedContent> = {}): HashedContent {
  return {
    id: '0190c1a2-7b3c-7d4e-8f90-0123456789ab',
    agent_id: 'agent-1',
    action_type: 'TOOL_CALL',
    action_name: 'search',
    action_status: 'success',
    timestamp: '2026-11-21T22:45:00.123Z',
    labels: {},
    sequence: 1,
    prev_hash: '0'.repeat(64),
    recorded_at: '2026-11-21T22:45:00.456Z',
    ...overrides,
  }
}

describe('canonicalizeEvent (RFC 8785)', () => {
  it('is byte-identical to the canonicalize package for arbitrary events', () => {
    fc.assert(
      fc.property(hashedContent, (content) => {
        expect(canonicalizeEvent(content)).to.equal(canonicalize(content))
      }),
      {numRuns: 500},
    )
  })

  it('orders members by UTF-16 code units and omits absent optional members', () => {
    // Written out by hand from RFC 8785 3.2.3 (sorted member names, no whitespace).
    expect(canonicalizeEvent(sample({duration_ms: 0, trace_id: 't'}))).to.equal(
      '{"action_name":"search","action_status":"success","action_type":"TOOL_CALL","agent_id":"agent-1",' +
        '"duration_ms":0,"id":"0190c1a2-7b3c-7d4e-8f90-0123456789ab","labels":{},' +
        '"prev_hash":"0000000000000000000000000000000000000000000000000000000000000000",' +
        '"recorded_at":"2026-11-21T22:45:00.456Z","sequence":1,"timestamp":"2026-11-21T22:45:00.123Z","trace_id":"t"}',
    )
  })

  it('serialises numbers and strings as in the RFC 8785 3.2.4 example', () => {
    // RFC 8785 section 3.2.4: 333333333.33333329 -> 333333333.3333333, 1E30 -> 1e+30, 2e-3 -> 0.002,
    // 0.000000000000000000000000001 -> 1e-27; the string "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"
    // -> "€$\u000f\nA'B\"\\\\\"/".
    const cases: Array<[number, string]> = [
      // The RFC's literal, more digits than a double holds: the point of the case.
      // eslint-disable-next-line no-loss-of-precision
      [333333333.33333329, '333333333.3333333'],
      [1e30, '1e+30'],
      [4.5, '4.5'],
      [2e-3, '0.002'],
      [0.000000000000000000000000001, '1e-27'],
      [-0, '0'],
    ]
    for (const [value, text] of cases) {
      expect(canonicalizeEvent(sample({duration_ms: value}))).to.contain(`"duration_ms":${text},`)
    }
    const rfcString = '\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/'
    expect(canonicalizeEvent(sample({error: rfcString}))).to.contain(String.raw`"error":"€$\u000f\nA'B\"\\\\\"/"`)
  })

  it('sorts label keys by code units, integer-like keys included', () => {
    // A plain JSON.stringify would put "9" and "10" first in numeric order (ECMAScript key order).
    const labels = JSON.parse('{"b":"1","10":"2","9":"3","A":"4","__proto__":"5"}') as Record<string, string>
    expect(canonicalizeEvent(sample({labels}))).to.contain(
      '"labels":{"10":"2","9":"3","A":"4","__proto__":"5","b":"1"}',
    )
  })

  it('keeps __proto__ and constructor keys of free-form JSON as data', () => {
    const input = JSON.parse('{"__proto__":{"polluted":true},"constructor":1,"toJSON":"x"}')
    expect(canonicalizeEvent(sample({input}))).to.contain(
      '"input":{"__proto__":{"polluted":true},"constructor":1,"toJSON":"x"}',
    )
  })

  it('hands values that are not plain JSON to the package, as a programmatic caller may pass them', () => {
    const odd = [{a: undefined, b: 1}, [undefined, 2], {when: new Date(0)}, {toJSON: () => 'x'}, new Map([[1, 2]])]
    for (const input of odd) {
      const content = sample({input: input as never})
      expect(canonicalizeEvent(content)).to.equal(canonicalize(content))
    }
  })

  it('copies strings that need no escape and escapes the others like JSON.stringify', () => {
    for (const value of ['plain', 'é€\u2028\u007f', 'a"b', 'a\\b', '\u0000\u001f\b', '😀', '\ufb33', '']) {
      expect(canonicalizeEvent(sample({agent_id: value}))).to.contain(`"agent_id":${JSON.stringify(value)},`)
    }
  })

  it('ignores hash and index of a stored event', () => {
    const content = sample()
    expect(canonicalizeEvent({...content, hash: 'f'.repeat(64), index: 7} as HashedContent)).to.equal(
      canonicalize(content),
    )
  })

  it('refuses what RFC 8785 refuses, like the package does', () => {
    expect(() => canonicalize(sample({agent_id: '\ud800'}))).to.throw()
    expect(() => canonicalizeEvent(sample({agent_id: '\ud800'}))).to.throw(/surrogate/)
    expect(() => canonicalizeEvent(sample({labels: {k: 'a\udc00'}}))).to.throw(/surrogate/)
    expect(() => canonicalizeEvent(sample({duration_ms: Number.NaN}))).to.throw()
    expect(() => canonicalizeEvent(sample({input: {x: Number.POSITIVE_INFINITY}}))).to.throw()
  })
})
