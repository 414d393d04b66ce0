import {expect} from 'chai'
import fc from 'fast-check'
import {
  DuplicateMemberError,
  PackageParser,
  PackageSyntaxError,
  parsePackageBytes,
} from '../../../src/core/evidence/package-parser.js'

/** What JSON.parse makes of the text: the value, or that it threw. */
function reference(text: string): {value?: unknown; threw?: true} {
  try {
    return {value: JSON.parse(text)}
  } catch {
    return {threw: true}
  }
}

function ours(text: string, chunk: number): {value?: unknown; threw?: true} {
  try {
    return {value: parsePackageBytes(Buffer.from(text), chunk)}
  } catch (error) {
    if (error instanceof SyntaxError || error instanceof DuplicateMemberError) return {threw: true}
    throw error
  }
}

/** The byte where a text stops being the start of some JSON text: the shortest failing prefix, found one by one. */
function firstBadByte(text: string): number {
  for (let end = 1; end <= text.length; end++) {
    try {
      JSON.parse(text.slice(0, end))
    } catch (error) {
      const message = (error as Error).message
      const at = / at position (\d+)/.exec(message)
      const inside = at ? Number(at[1]) < end : message.startsWith('Unexpected token')
      if (inside) return Buffer.byteLength(text.slice(0, end - 1))
    }
  }
  return Buffer.byteLength(text)
}

const packageLike = fc.record(
  {
    format: fc.constant('audit-trail-evidence'),
    merkle: fc.record({tree_size: fc.nat(), root: fc.string({minLength: 64, maxLength: 64})}),
    events: fc.array(fc.jsonValue({maxDepth: 3}), {maxLength: 8}),
    chains: fc.dictionary(fc.string(), fc.jsonValue({maxDepth: 2}), {maxKeys: 3}),
    proofs: fc.dictionary(
      fc.string({maxLength: 6}),
      fc.oneof(
        fc.record({
          leaf_index: fc.nat(),
          audit_path: fc.array(fc.constantFrom('aa', 'bb', 'cc', 'é"\\'), {maxLength: 5}),
        }),
        fc.jsonValue({maxDepth: 2}),
      ),
      {maxKeys: 8},
    ),
    timestamp: fc.jsonValue({maxDepth: 2}),
  },
  {requiredKeys: []},
)

describe('PackageParser (an evidence package read in chunks)', () => {
  it('gives what JSON.parse gives, for any package-shaped document, layout and chunk size (property)', () => {
    fc.assert(
      fc.property(
        packageLike,
        fc.constantFrom(undefined, 1, 2, '\t', ' \n '),
        fc.integer({min: 1, max: 64}),
        (doc, indent, chunk) => {
          const text = JSON.stringify(doc, null, indent as string | number | undefined)
          expect(ours(text, chunk)).to.deep.equal(reference(text))
        },
      ),
      {numRuns: 400},
    )
  })

  it('accepts exactly what JSON.parse accepts when one byte of a package is changed or removed (property)', () => {
    const base = JSON.stringify(
      {
        format: 'x',
        events: [{a: 1, b: [1, 2]}, 'two', 3, null],
        proofs: {e1: {leaf_index: 0, audit_path: ['aa', 'bb']}, 'e"2': [1, {c: '}'}]},
        chains: {},
        timestamp: null,
      },
      null,
      1,
    )
    const edits = fc.record({
      at: fc.nat({max: base.length - 1}),
      insert: fc.constantFrom('', ',', '[', ']', '{', '}', '"', '\\', ':', ' ', '0'),
      remove: fc.boolean(),
    })
    fc.assert(
      fc.property(edits, fc.integer({min: 1, max: 16}), ({at, insert, remove}, chunk) => {
        const text = base.slice(0, at) + insert + base.slice(remove ? at + 1 : at)
        const expected = reference(text)
        const actual = ours(text, chunk)
        expect(actual, JSON.stringify(text)).to.deep.equal(expected)
      }),
      {numRuns: 1500},
    )
  })

  it('refuses doubled and trailing commas and empty elements inside events and proofs, at every chunk boundary', () => {
    const bad = [
      '{"events":[1,,2]}',
      '{"events":[1,]}',
      '{"events":[,1]}',
      '{"proofs":{"a":1,}}',
      '{"proofs":{,"a":1}}',
      '{"proofs":{"a":1,,"b":2}}',
      '{"events":[1 2]}',
      '{"proofs":{"a" 1}}',
    ]
    for (const text of bad) {
      for (let chunk = 1; chunk <= text.length; chunk++)
        expect(ours(text, chunk), `${text} in chunks of ${chunk}`).to.deep.equal({threw: true})
    }
    for (const text of ['{"events":[ ]}', '{"proofs":{ }}', '{"events":[],"proofs":{}}']) {
      for (let chunk = 1; chunk <= text.length; chunk++) expect(ours(text, chunk)).to.deep.equal(reference(text))
    }
  })

  it('refuses a top-level member given twice, also when spelled with escapes', () => {
    const doubled = Buffer.from('{"events":[],"events":[1]}')
    expect(() => parsePackageBytes(doubled)).to.throw(DuplicateMemberError, /member \$\.events twice/)
    const escaped = Buffer.from('{"proofs":{},"pr\\u006fofs":{}}')
    expect(() => parsePackageBytes(escaped)).to.throw(DuplicateMemberError, /member \$\.proofs twice/)
  })

  it('refuses a member given twice at any depth, naming its path, whatever the chunk size', () => {
    const event = (extra: string) =>
      `{"id":"e1","agent_id":"a","labels":{"env":"prod"${extra}},"input":{"q":[1,{"k":2}]}}`
    const cases: Array<[string, string]> = [
      [`{"events":[${event('')},{"id":"e2","id":"e3"}]}`, '$.events[1].id'],
      [`{"events":[${event(',"env":"FAKE"')}]}`, '$.events[0].labels.env'],
      [`{"events":[${event('')},{"id":"e2","input":{"q":[1,{"k":2,"k":3}]}}],"x":1}`, '$.events[1].input.q[1].k'],
      ['{"proofs":{"e1":{"leaf_index":0,"audit_path":[]},"e2":{},"e1":{}}}', '$.proofs.e1'],
      ['{"proofs":{"e1":{"leaf_index":0,"leaf_index":1,"audit_path":[]}}}', '$.proofs.e1.leaf_index'],
      ['{"checkpoint":{"note":"a","consistency_proof":[],"note":"b"},"events":[]}', '$.checkpoint.note'],
      ['{"chains":{"a":{"head_hash":"x","head_hash":"y"}},"events":[]}', '$.chains.a.head_hash'],
      ['{"chains":{"a":{},"\\u0061":{}}}', '$.chains.a'],
      ['{"merkle":{"root":"x","root":"y"}}', '$.merkle.root'],
    ]
    for (const [text, path] of cases) {
      JSON.parse(text) // well-formed: only the duplicate is wrong
      for (let chunk = 1; chunk <= text.length; chunk++) {
        expect(() => parsePackageBytes(Buffer.from(text), chunk), `${text} in chunks of ${chunk}`)
          .to.throw(DuplicateMemberError)
          .with.property('path', path)
      }
    }
  })

  it('names the byte of the file where the JSON breaks, for any chunk size (property)', () => {
    const base = JSON.stringify(
      {
        format: 'zürich ☃',
        events: [{a: 1, b: [1, 2], c: '𝄞'}, 'two', 3, null],
        proofs: {e1: {leaf_index: 0, audit_path: ['aa', 'é']}, e2: [1, {c: '}'}]},
        chains: {},
        timestamp: null,
      },
      null,
      1,
    )
    const insert = fc.constantFrom('x', ',', ']', '}', ':', '0', '"')
    const edits = fc.record({at: fc.nat({max: base.length - 1}), insert})
    fc.assert(
      fc.property(edits, fc.integer({min: 1, max: 16}), ({at, insert}, chunk) => {
        const text = base.slice(0, at) + insert + base.slice(at)
        if (!reference(text).threw) return
        try {
          parsePackageBytes(Buffer.from(text), chunk)
          expect.fail(`accepted ${JSON.stringify(text)}`)
        } catch (error) {
          expect(error, JSON.stringify(text)).to.be.instanceOf(PackageSyntaxError)
          const offset = (error as PackageSyntaxError).offset
          expect(offset, JSON.stringify(text)).to.equal(firstBadByte(text))
          expect((error as Error).message).to.match(new RegExp(`at byte ${offset}$`))
        }
      }),
      {numRuns: 500},
    )
  })

  it('names the first of two faults, also when the later one is inside events or proofs', () => {
    for (const text of [
      '{"a":tru,"events":[1,x,2,3]}',
      '{"a":[}],"proofs":{"p":1,"q":x,"r":2}}',
      '0{"events":[1,,2]}',
    ]) {
      for (let chunk = 1; chunk <= text.length; chunk++) {
        expect(() => parsePackageBytes(Buffer.from(text), chunk), `${text} in chunks of ${chunk}`)
          .to.throw(PackageSyntaxError)
          .with.property('offset', firstBadByte(text))
      }
    }
  })

  it('finds `events` and `proofs` under escaped names, as JSON.parse does', () => {
    const text = '{"ev\\u0065nts":[{"id":"a"}],"\\u0070roofs":{"a":{"leaf_index":0,"audit_path":[]}}}'
    for (let chunk = 1; chunk <= text.length; chunk++)
      expect(parsePackageBytes(Buffer.from(text), chunk)).to.deep.equal(JSON.parse(text))
  })

  it('keeps a proof named __proto__ an ordinary member, as JSON.parse does', () => {
    const text = '{"proofs":{"__proto__":{"leaf_index":1},"a":1,"b":2}}'
    const parsed = parsePackageBytes(Buffer.from(text), 3) as unknown as {proofs: Record<string, unknown>}
    expect(Object.getPrototypeOf(parsed.proofs)).to.equal(Object.prototype)
    expect(Object.hasOwn(parsed.proofs, '__proto__')).to.equal(true)
    expect(parsed.proofs).to.deep.equal(JSON.parse(text).proofs)
    expect(Object.keys(parsed.proofs)).to.deep.equal(['__proto__', 'a', 'b'])
  })

  it('decodes multi-byte UTF-8 split across chunks', () => {
    const text = JSON.stringify({events: [{name: 'zürich ☃ 𝄞'}], proofs: {'clé ☃': {audit_path: ['ü']}}, other: '☃'})
    for (let chunk = 1; chunk <= 7; chunk++)
      expect(parsePackageBytes(Buffer.from(text), chunk)).to.deep.equal(JSON.parse(text))
  })

  it('reports a truncated package as a syntax error', () => {
    const parser = new PackageParser()
    parser.push(Buffer.from('{"events":[{"id":"a"},{"id":'))
    expect(() => parser.finish()).to.throw(SyntaxError)
  })
})
