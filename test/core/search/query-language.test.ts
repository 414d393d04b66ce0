import {expect} from 'chai'
import fc from 'fast-check'
import {AuditError} from '../../../src/core/errors.js'
import {parseSearchQuery} from '../../../src/core/search/query-language.js'

function refusal(q: string): AuditError {
  try {
    parseSearchQuery(q)
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    return error as AuditError
  }
  throw new Error(`accepted: ${JSON.stringify(q)}`)
}

describe('parseSearchQuery (GET /v1/search)', () => {
  const cases: Array<[string, string[]]> = [
    ['refund', ['refund']],
    ['  Refund   POLICY\t', ['refund', 'policy']],
    ['"Refund Policy" denied', ['refund policy', 'denied']],
    ['a "b  c" d', ['a', 'b  c', 'd']],
    ['" padded phrase "', ['padded phrase']],
    ['say"hello world"now', ['say', 'hello world', 'now']],
    ['"unclosed phrase', ['unclosed phrase']],
    ['x "" y', ['x', 'y']],
    ['TOOL_CALL agent-1 {"k":1}', ['tool_call', 'agent-1', '{', 'k', ':1}']],
    ['Ünïcödé ÉMOJI😀', ['ünïcödé', 'émoji😀']],
    ['a\u00a0b\u2003c', ['a', 'b', 'c']],
  ]
  for (const [q, terms] of cases) {
    it(`parses ${JSON.stringify(q)}`, () => {
      expect(parseSearchQuery(q)).to.deep.equal({terms})
    })
  }

  it('refuses a blank query with a validation error on q', () => {
    for (const q of ['', '   ', '\t\n']) {
      const error = refusal(q)
      expect(error.status).to.equal(400)
      expect(error.code).to.equal('validation_error')
      expect(error.details).to.deep.equal([{field: 'q', message: 'must not be blank'}])
    }
  })

  it('refuses a query with only empty phrases', () => {
    expect(refusal('"" "  "').details).to.deep.equal([{field: 'q', message: 'must contain at least one search term'}])
  })

  it('keeps every quote-free word of a query, lower-cased, in order', () => {
    const word = fc.stringMatching(/^[^\s"]+$/)
    fc.assert(
      fc.property(fc.array(word, {minLength: 1, maxLength: 6}), fc.constantFrom(' ', '\t', '  \n '), (words, gap) => {
        expect(parseSearchQuery(gap + words.join(gap)).terms).to.deep.equal(words.map((w) => w.toLowerCase()))
      }),
    )
  })
})
