import {expect} from 'chai'
import {AuditError} from '../../src/core/errors.js'
import {parseEventQuery, parseStreamQuery, parseVerifyQuery} from '../../src/core/query-params.js'
import {lookupId, requestTextProblem} from '../../src/core/request-text.js'
import {parseSearchQuery} from '../../src/core/search/index.js'

/** The fields of the validation_error `parse` throws. */
function refusedFields(parse: () => unknown): string[] {
  try {
    parse()
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    expect((error as AuditError).code).to.equal('validation_error')
    return (error as AuditError).details!.map((d) => d.field)
  }
  expect.fail('accepted')
}

describe('text from a request that a store compares', () => {
  it('refuses U+0000 and unpaired surrogates, and nothing else', () => {
    expect(requestTextProblem('a\u0000b')).to.match(/U\+0000/)
    expect(requestTextProblem('\ud800')).to.match(/unpaired surrogates/)
    expect(requestTextProblem('x\udc00')).to.match(/unpaired surrogates/)
    for (const plain of ['', "'", '%_\\', 'a & !b | c:*', '😀', '\uFFFD', '\u0001\u007f', 'x'.repeat(100_000)])
      expect(requestTextProblem(plain), JSON.stringify(plain)).to.equal(undefined)
  })

  it('names every filter holding it, and only those', () => {
    const params = {agent_id: 'a\u0000', session_id: 'ok', trace_id: '\ud800', 'label.env': '\u0000', until: '\u0000'}
    expect(refusedFields(() => parseEventQuery(params))).to.deep.equal(['agent_id', 'trace_id', 'until', 'label.env'])
    expect(refusedFields(() => parseStreamQuery({action_type: '\u0000'}))).to.deep.equal(['action_type'])
    expect(refusedFields(() => parseVerifyQuery({agent_id: '\u0000'}))).to.deep.equal(['agent_id'])
    expect(refusedFields(() => parseSearchQuery('word \u0000'))).to.deep.equal(['q'])
    expect(parseEventQuery({agent_id: "O'Brien%_"}).filter).to.deep.equal({agent_id: "O'Brien%_"})
  })

  it('turns a path id no event can have into no id, and lower-cases the others', () => {
    expect(lookupId('\u0000')).to.equal(undefined)
    expect(lookupId('ABC-\uFFFD')).to.equal('abc-\uFFFD')
  })
})
