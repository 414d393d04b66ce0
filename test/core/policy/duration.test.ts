import {expect} from 'chai'
import fc from 'fast-check'
import {AuditError} from '../../../src/core/errors.js'
import {formatDuration, parseDuration} from '../../../src/core/policy/duration.js'

describe('policy durations', () => {
  it('parses the four units of docs/api.md to milliseconds', () => {
    // Known answers: 30*1000, 15*60*1000, 60*60*1000, 7*24*60*60*1000.
    expect(parseDuration('30s')).to.equal(30_000)
    expect(parseDuration('15m')).to.equal(900_000)
    expect(parseDuration('1h')).to.equal(3_600_000)
    expect(parseDuration('7d')).to.equal(604_800_000)
    expect(parseDuration('090m')).to.equal(5_400_000)
  })

  for (const text of [
    '',
    '1',
    'h',
    '0s',
    '0d',
    '-1h',
    '+1h',
    '1.5h',
    '1H',
    ' 1h',
    '1h ',
    '1hr',
    '1h30m',
    '1w',
    '1ms',
    '99999999999999999d',
  ]) {
    it(`rejects ${JSON.stringify(text)} with a validation error`, () => {
      expect(() => parseDuration(text))
        .to.throw(AuditError)
        .with.property('code', 'validation_error')
    })
  }

  it('rejects a number that is not a string', () => {
    expect(() => parseDuration(3600 as unknown as string)).to.throw(AuditError)
  })

  it('agrees with a naive reference on every whole number and unit', () => {
    const unitMs = {s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7}
    fc.assert(
      fc.property(fc.integer({min: 1, max: 1_000_000}), fc.constantFrom('s', 'm', 'h', 'd'), (count, unit) => {
        expect(parseDuration(`${count}${unit}`)).to.equal(count * unitMs[unit])
      }),
    )
  })

  it('formats milliseconds largest unit first', () => {
    expect(formatDuration(5_400_000)).to.equal('1h 30m')
    expect(formatDuration(90_061_000)).to.equal('1d 1h 1m 1s')
    expect(formatDuration(1500)).to.equal('1.5s')
    expect(formatDuration(0)).to.equal('0s')
    expect(formatDuration(3_600_001)).to.equal('1h 0.001s')
  })
})
