/** Trail names and the agent patterns of a key line (CONTRACT sections 6 and 12), against a naive reference. */
import {expect} from 'chai'
import {agentMatcher, checkTrailName, isTrailName} from '../../../src/core/trail/name.js'

/**
 * The reference: a pattern matches when its pieces between stars appear in order, the first at
 * the start and the last at the end.
 */
function naiveMatch(pattern: string, id: string): boolean {
  const pieces = pattern.split('*')
  if (pieces.length === 1) return pattern === id
  const first = pieces[0]!
  const last = pieces.at(-1)!
  if (!id.startsWith(first) || id.length < first.length + last.length || !id.endsWith(last)) return false
  let at = first.length
  const end = id.length - last.length
  for (const piece of pieces.slice(1, -1)) {
    const found = id.indexOf(piece, at)
    if (found < 0 || found + piece.length > end) return false
    at = found + piece.length
  }
  return true
}

describe('trail names and agent patterns', () => {
  it('accepts the names of the contract and refuses the rest, naming the rule', () => {
    for (const name of ['default', 'payments', 'a', '0', 'team-7', 'x'.repeat(63)])
      expect(isTrailName(name), name).to.equal(true)
    for (const name of ['', '-a', 'Payments', 'a_b', 'a/b', 'x'.repeat(64), 'a.b', 'é'])
      expect(isTrailName(name), name).to.equal(false)
    expect(() => checkTrailName('A')).to.throw(/1 to 63 characters of a-z 0-9 and -.*'A'/)
  })

  it('matches agent ids as the naive reference does, regular-expression characters taken literally', () => {
    const alphabet = ['a', 'b', '.', '*', '-', '(', '$']
    let seed = 7
    const pick = () => alphabet[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % alphabet.length]!
    for (let i = 0; i < 3000; i++) {
      const pattern = Array.from({length: 1 + (i % 6)}, pick).join('')
      const id = Array.from({length: i % 8}, pick)
        .join('')
        .replaceAll('*', 'a')
      expect(agentMatcher([pattern])(id), `${pattern} ~ ${id}`).to.equal(naiveMatch(pattern, id))
    }
    const billing = agentMatcher(['billing-*', 'ci'])
    expect(['billing-1', 'billing-', 'ci'].map(billing)).to.deep.equal([true, true, true])
    expect(['billing', 'ci-2', 'xbilling-1'].map(billing)).to.deep.equal([false, false, false])
  })
})
