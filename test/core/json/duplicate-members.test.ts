import {expect} from 'chai'
import fc from 'fast-check'
import {
  DuplicateMemberError,
  findDuplicateMembers,
  formatJsonPath,
  parseUniqueJson,
  type JsonPath,
} from '../../../src/core/json/duplicate-members.js'

/**
 * A JSON value whose objects are lists of members, so that a name can be given twice: what
 * JSON.parse turns into one object, and what the scanner must see through.
 */
type Doc = null | number | string | Doc[] | {members: Array<[string, Doc]>}

/** Writes a Doc as JSON text; `escape` spells the characters of some names as \u escapes. */
function write(doc: Doc, escape: (name: string) => boolean, space: string): string {
  if (doc === null || typeof doc === 'number' || typeof doc === 'string') return JSON.stringify(doc)
  if (Array.isArray(doc)) return `[${space}${doc.map((d) => write(d, escape, space)).join(`,${space}`)}${space}]`
  const members = doc.members.map(([name, value]) => {
    const spelled = escape(name)
      ? `"${[...name].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`
      : JSON.stringify(name)
    return `${spelled}${space}:${space}${write(value, escape, space)}`
  })
  return `{${space}${members.join(`,${space}`)}${space}}`
}

/** The naive reference: the members given twice, in the order their second name appears in the text. */
function reference(doc: Doc, path: JsonPath = [], found: JsonPath[] = []): JsonPath[] {
  if (Array.isArray(doc)) doc.forEach((d, i) => reference(d, [...path, i], found))
  else if (doc !== null && typeof doc === 'object') {
    const seen = new Set<string>()
    for (const [name, value] of doc.members) {
      if (seen.has(name)) found.push([...path, name])
      seen.add(name)
      reference(value, [...path, name], found)
    }
  }
  return found
}

// Names from a small alphabet, so that doubles are frequent; quotes and backslashes included.
const name = fc.stringMatching(/^[ab"\\é]{0,2}$/)
const doc: fc.Arbitrary<Doc> = fc.letrec<{doc: Doc}>((tie) => ({
  doc: fc.oneof(
    {depthSize: 'small', withCrossShrink: true},
    fc.constant(null),
    fc.integer(),
    // Strings that look like structure: the scanner must skip them.
    fc.constantFrom('a', '"b"', '{', '[1,', '\\', '\\"', 'é:'),
    fc.array(tie('doc'), {maxLength: 4}),
    fc.record({members: fc.array(fc.tuple(name, tie('doc')), {maxLength: 5})}),
  ),
})).doc

describe('findDuplicateMembers (RFC 7493 section 2.3)', () => {
  it('finds the first member given twice, in document order, as a naive reference does (property)', () => {
    fc.assert(
      fc.property(doc, fc.func(fc.boolean()), fc.constantFrom('', ' ', '\n  '), (value, escape, space) => {
        const text = write(value, escape, space)
        JSON.parse(text) // the scanner's precondition
        const expected = reference(value)
        expect(
          findDuplicateMembers(text).map((d) => d.path),
          text,
        ).to.deep.equal(expected.slice(0, 1))
      }),
      {numRuns: 2000},
    )
  })

  it('with perElement, finds the first of each element of an array (property)', () => {
    fc.assert(
      fc.property(fc.array(doc, {maxLength: 6}), (elements) => {
        const text = write(elements, () => false, '')
        const expected = elements.flatMap((element, i) => reference(element, [i]).slice(0, 1))
        expect(
          findDuplicateMembers(text, {perElement: true}).map((d) => d.path),
          text,
        ).to.deep.equal(expected)
      }),
      {numRuns: 1000},
    )
  })

  it('names the place: the path, and the offset of the second name', () => {
    const text = '{"events": [{"id": 1}, {"labels": {"env": "FAKE", "env": "prod"}}]}'
    const [duplicate] = findDuplicateMembers(text)
    expect(duplicate!.path).to.deep.equal(['events', 1, 'labels', 'env'])
    expect(formatJsonPath(duplicate!.path)).to.equal('$.events[1].labels.env')
    expect(text.slice(duplicate!.offset)).to.match(/^"env": "prod"/)
  })

  it('compares names after their escapes are decoded, and only names', () => {
    expect(findDuplicateMembers('{"env":1,"\\u0065nv":2}')[0]?.path).to.deep.equal(['env'])
    expect(findDuplicateMembers('{"a\\\\":1,"a":2}')).to.deep.equal([])
    expect(findDuplicateMembers('{"a":"a","b":"a","c":["a","a"]}')).to.deep.equal([])
    expect(findDuplicateMembers('[{"a":1},{"a":1}]')).to.deep.equal([])
    expect(findDuplicateMembers('{"a":{"b":1},"b":{"a":1}}')).to.deep.equal([])
    expect(findDuplicateMembers('{"x":"\\"","x":"}"}')[0]?.path).to.deep.equal(['x'])
    expect(findDuplicateMembers('{"":1,"":2}')[0]?.path).to.deep.equal([''])
  })

  it('finds a name given twice in an object of many members (kept in a Set beyond a few)', () => {
    const members = Array.from({length: 500}, (_, i) => `"m${i}":${i}`)
    expect(findDuplicateMembers(`{${members.join(',')}}`)).to.deep.equal([])
    const text = `{"outer":{${[...members, '"m7":0'].join(',')}},"next":{"m7":1}}`
    expect(findDuplicateMembers(text)[0]?.path).to.deep.equal(['outer', 'm7'])
  })

  it('reports one duplicate for a document that is not an array, even with perElement', () => {
    expect(findDuplicateMembers('{"a":{"b":1,"b":2},"a":3}', {perElement: true}).map((d) => d.path)).to.deep.equal([
      ['a', 'b'],
    ])
  })

  it('formats odd names in brackets, as RFC 9535 JSONPath writes them', () => {
    expect(formatJsonPath(['labels', 'k8s.io/name', 0, 'a b', '"'])).to.equal(
      '$.labels["k8s.io/name"][0]["a b"]["\\""]',
    )
    expect(formatJsonPath([])).to.equal('$')
  })

  it('parseUniqueJson: JSON.parse, then a DuplicateMemberError naming the path', () => {
    expect(parseUniqueJson('{"a":[1,{"b":2}]}')).to.deep.equal({a: [1, {b: 2}]})
    expect(() => parseUniqueJson('{"a":1', 'the body')).to.throw(SyntaxError)
    expect(() => parseUniqueJson('{"a":[1,{"b":2,"b":3}]}', 'the body'))
      .to.throw(DuplicateMemberError, /^the body has the member \$\.a\[1\]\.b twice/)
      .with.property('path', '$.a[1].b')
    expect(() => parseUniqueJson('{"a":1,"a":2}'))
      .to.throw(DuplicateMemberError)
      .with.property('code', 'duplicate_member')
  })
})
