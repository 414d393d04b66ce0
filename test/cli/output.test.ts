import {expect} from 'chai'
import {canShowProgress, problemText} from '../../src/cli/output.js'
import {AuditError} from '../../src/core/errors.js'
import {parseDuration, parsePolicyDocument} from '../../src/core/policy/index.js'

function thrown(work: () => unknown): unknown {
  try {
    work()
  } catch (error) {
    return error
  }
  throw new Error('expected an error')
}

describe('cli/output problemText (an error as one line for stderr)', () => {
  it('lists every problem of a policy document once, with the rule of the first', () => {
    const error = thrown(() =>
      parsePolicyDocument({policies: [{name: 'a', type: 'max_rate', match: {}, max: -1, per: 'soon'}, {type: 'nope'}]}),
    )
    const text = problemText(error)
    expect(text).to.match(/^policy rule "a": policies\[0\]\.max /)
    for (const field of ['policies[0].max', 'policies[0].per', 'policies[1].name', 'policies[1].type']) {
      expect(text.split(`${field} `).length - 1, field).to.equal(1)
    }
    expect(text).not.to.contain('more problem')
    expect(text).not.to.contain('\n')
  })

  it('keeps two fields with the same complaint apart', () => {
    const error = thrown(() => parsePolicyDocument({policies: [{type: 'chain_integrity'}, {type: 'chain_integrity'}]}))
    expect(problemText(error)).to.match(/policies\[0\]\.name .*; policies\[1\]\.name /)
  })

  it('does not repeat a complaint the message already states, and passes plain errors through', () => {
    const duration = problemText(thrown(() => parseDuration('5q')))
    expect(duration.split('must be a duration').length - 1).to.equal(1)
    expect(problemText(new Error('plain'))).to.equal('plain')
    expect(
      problemText(new AuditError('validation_error', 'bad', {details: [{field: 'x', message: 'is odd'}]})),
    ).to.equal('bad; x is odd')
  })
})

describe('cli/output canShowProgress', () => {
  it('draws progress only on a terminal that reports a width', () => {
    expect(canShowProgress({isTTY: true, columns: 80})).to.equal(true)
    // A pty nobody sized reports 0 columns: ora's redraw would never end there.
    expect(canShowProgress({isTTY: true, columns: 0})).to.equal(false)
    expect(canShowProgress({isTTY: true})).to.equal(false)
    expect(canShowProgress({isTTY: false, columns: 80})).to.equal(false)
    expect(canShowProgress({})).to.equal(false)
  })
})
