import {expect} from 'chai'
import fc from 'fast-check'
import {RateWindow} from '../../../src/core/policy/rate-window.js'
import {naiveExceeded} from './reference.js'

function windowExceeded(times: number[], max: number, per: number): boolean[] {
  const window = new RateWindow(max, per)
  return times.map((time) => window.add(time))
}

describe('max_rate sliding window', () => {
  it('allows max events in a window and flags the next one', () => {
    // 3 per 10 s: events at 0, 1, 2 s fit; the fourth at 3 s is the 4th in (−7 s, 3 s].
    expect(windowExceeded([0, 1000, 2000, 3000], 3, 10_000)).to.deep.equal([false, false, false, true])
  })

  it('treats the window as half-open: events exactly `per` apart never share one', () => {
    expect(windowExceeded([0, 10_000, 20_000, 30_000], 1, 10_000)).to.deep.equal([false, false, false, false])
    expect(windowExceeded([0, 9_999], 1, 10_000)).to.deep.equal([false, true])
  })

  it('counts a timestamp that goes backwards at the latest time seen', () => {
    // The third event says 1 s but follows one at 20 s in the chain: it counts at 20 s, with the second.
    expect(windowExceeded([0, 20_000, 1_000], 1, 10_000)).to.deep.equal([false, false, true])
  })

  it('flags every event with max 0', () => {
    expect(windowExceeded([5, 5, 100_000], 0, 1000)).to.deep.equal([true, true, true])
  })

  it('agrees with a naive reference on random times, including ones going backwards', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({min: 0, max: 60_000}), {maxLength: 80}),
        fc.integer({min: 0, max: 6}),
        fc.integer({min: 1, max: 20_000}),
        fc.boolean(),
        (raw, max, per, sorted) => {
          const times = sorted ? [...raw].sort((a, b) => a - b) : raw
          expect(windowExceeded(times, max, per)).to.deep.equal(naiveExceeded(times, max, per))
        },
      ),
      {numRuns: 500},
    )
  })

  it('keeps working across compaction of its buffer', () => {
    const times = Array.from({length: 2000}, (_, i) => i * 7)
    expect(windowExceeded(times, 3, 25)).to.deep.equal(naiveExceeded(times, 3, 25))
    expect(windowExceeded(times, 3, 22)).to.deep.equal(naiveExceeded(times, 3, 22))
  })
})
