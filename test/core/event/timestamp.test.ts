import {expect} from 'chai'
import fc from 'fast-check'
import {normalizeTimestamp, normalizeTimestampStrictly} from '../../../src/core/event/timestamp.js'

function normalized(text: string): string {
  const result = normalizeTimestamp(text)
  if ('error' in result) throw new Error(`${text}: ${result.error}`)
  return result.value
}

function refusal(text: string): string {
  const result = normalizeTimestamp(text)
  if ('value' in result) throw new Error(`${text} accepted as ${result.value}`)
  return result.error
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** Writes an instant as local time at a given offset, the way a client in that zone would. */
function writeAtOffset(instant: Date, offsetMinutes: number, fraction: string): string {
  const local = new Date(instant.getTime() + offsetMinutes * 60_000)
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  return (
    `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T` +
    `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
    `.${pad(local.getUTCMilliseconds(), 3)}${fraction}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  )
}

describe('normalizeTimestamp (RFC 3339 5.6)', () => {
  it('gives back the same instant written at any offset, extra digits truncated', () => {
    const instant = fc.date({
      min: new Date('0001-01-02T00:00:00Z'),
      max: new Date('9999-12-30T00:00:00Z'),
      noInvalidDate: true,
    })
    const offset = fc.integer({min: -(23 * 60 + 59), max: 23 * 60 + 59})
    const digits = fc.stringMatching(/^[0-9]{0,9}$/)
    fc.assert(
      fc.property(instant, offset, digits, (date, minutes, extra) => {
        expect(normalized(writeAtOffset(date, minutes, extra))).to.equal(date.toISOString())
      }),
    )
  })

  it('takes text already in the stored form exactly as the strict parse does, also when one character is off', () => {
    const instant = fc.date({
      min: new Date('0000-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59.999Z'),
      noInvalidDate: true,
    })
    // One position of the stored form replaced by another character: invalid months, days, hours,
    // seconds (60), separators, a lower-case z, a sign.
    const change = fc.record({at: fc.integer({min: 0, max: 23}), char: fc.constantFrom(...'0123456789-:.TtZz+ 9')})
    fc.assert(
      fc.property(instant, fc.option(change), (date, edit) => {
        let text = date.toISOString()
        if (edit) text = text.slice(0, edit.at) + edit.char + text.slice(edit.at + 1)
        expect(normalizeTimestamp(text), text).to.deep.equal(normalizeTimestampStrictly(text))
      }),
      {numRuns: 5000},
    )
    for (const text of [
      '2026-02-29T00:00:00.000Z',
      '2024-02-30T00:00:00.000Z',
      '2026-11-21T24:00:00.000Z',
      '2026-11-21T23:59:60.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-11-21T22:45:00.000z',
      '+10000-01-01T00:00Z',
      '2026-11-21 22:45:00.000Z',
    ]) {
      expect(normalizeTimestamp(text), text).to.deep.equal(normalizeTimestampStrictly(text))
    }
  })

  it('normalises zones, separators and fractions', () => {
    const cases: Array<[string, string]> = [
      ['2026-11-21T22:45:00Z', '2026-11-21T22:45:00.000Z'],
      ['2026-11-21t22:45:00z', '2026-11-21T22:45:00.000Z'],
      ['2026-11-21 22:45:00Z', '2026-11-21T22:45:00.000Z'],
      ['2026-11-21T22:45:00.5Z', '2026-11-21T22:45:00.500Z'],
      ['2026-11-21T22:45:00.123999Z', '2026-11-21T22:45:00.123Z'],
      ['2026-11-21T22:45:59.9999999Z', '2026-11-21T22:45:59.999Z'],
      ['2026-11-21T23:45:00+01:00', '2026-11-21T22:45:00.000Z'],
      ['2026-11-22T04:15:00+05:30', '2026-11-21T22:45:00.000Z'],
      ['2026-11-21T22:45:00-00:00', '2026-11-21T22:45:00.000Z'],
      ['2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000Z'],
      ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
      ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
      // Years below 100 stay themselves (Date.UTC would turn 0050 into 1950).
      ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ]
    for (const [text, expected] of cases) expect(normalized(text), text).to.equal(expected)
  })

  it('refuses a time without a zone', () => {
    expect(refusal('2026-11-21T22:45:00')).to.match(/time zone/)
    expect(refusal('2026-11-21T22:45:00.123')).to.match(/time zone/)
  })

  it('refuses impossible dates and times', () => {
    for (const text of [
      '2026-13-45T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-02-29T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-01-00T00:00:00Z',
    ]) {
      expect(refusal(text), text).to.match(/calendar date/)
    }
    for (const text of ['2026-11-21T24:00:00Z', '2026-11-21T23:60:00Z', '2026-12-31T23:59:60Z']) {
      expect(refusal(text), text).to.match(/time of day/)
    }
    expect(refusal('2026-11-21T22:45:00+24:00')).to.match(/offset/)
    expect(refusal('2026-11-21T22:45:00+01:60')).to.match(/offset/)
  })

  it('refuses other syntaxes', () => {
    for (const text of [
      '',
      '2026-11-21',
      '2026-11-21T22:45Z',
      '2026-11-21T22:45:00+0100',
      '2026-11-21T22:45:00+01',
      '2026-11-21T22:45:00.Z',
      '26-11-21T22:45:00Z',
      '+2026-11-21T22:45:00Z',
      '2026-11-21T22:45:00Z ',
      'Sat, 21 Nov 2026 22:45:00 GMT',
      '２０２６-11-21T22:45:00Z',
    ]) {
      expect(refusal(text), text).to.match(/RFC 3339/)
    }
  })

  it('refuses instants outside the years 0000..9999 in UTC', () => {
    expect(refusal('9999-12-31T23:30:00-01:00')).to.match(/out of range/)
    expect(refusal('0000-01-01T00:30:00+01:00')).to.match(/out of range/)
    expect(normalized('0000-01-01T00:30:00Z')).to.equal('0000-01-01T00:30:00.000Z')
  })
})
