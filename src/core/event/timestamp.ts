/**
 * Event times (docs/api.md): an RFC 3339 section 5.6 date-time with a time zone, stored
 * normalised to UTC as `YYYY-MM-DDTHH:mm:ss.sssZ` (the form of Date.prototype.toISOString).
 *
 * Decisions where RFC 3339 leaves room:
 * - `T`/`t` or a space between date and time (RFC 3339 5.6, note), `Z`/`z` or `±hh:mm`; `-00:00`
 *   is read as UTC. A time without a zone is refused: its instant is unknown.
 * - Fractions of a second beyond milliseconds are truncated, not rounded, so that the stored time
 *   never moves into the next millisecond (or the next second, minute, day) of what was sent.
 * - Leap seconds (`:60`) and the ISO 8601 `24:00` are refused: a JavaScript Date cannot hold them.
 * - The UTC result must lie in the years 0000..9999, the range the stored form can express.
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))?$/

export type TimestampResult = {value: string} | {error: string}

/** Days in a month of the proleptic Gregorian calendar (RFC 3339 5.7). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
    return leap ? 29 : 28
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/** Parses an RFC 3339 date-time strictly and returns its UTC form, or why it is refused. */
export function normalizeTimestamp(text: string): TimestampResult {
  // Most clients already send the stored form. A text that Date reads and writes back unchanged
  // is a valid date-time in UTC, years 0000..9999, that the strict parse would return as it is.
  if (text.length === 24 && text.charCodeAt(23) === 0x5a /* Z */) {
    const ms = Date.parse(text)
    if (Number.isFinite(ms) && new Date(ms).toISOString() === text) return {value: text}
  }
  return normalizeTimestampStrictly(text)
}

/** normalizeTimestamp without the shortcut for text already in the stored form. */
export function normalizeTimestampStrictly(text: string): TimestampResult {
  const match = DATE_TIME.exec(text)
  if (!match) return {error: 'must be an RFC 3339 date-time such as 2026-11-21T22:45:00Z'}
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, offsetHours, offsetMinutes] = match
  if (!zulu && !sign) return {error: 'must include a time zone (Z or ±hh:mm)'}

  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const hour = Number(h)
  const minute = Number(mi)
  const second = Number(s)
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return {error: 'is not a valid calendar date'}
  }
  if (hour > 23 || minute > 59 || second > 59) return {error: 'is not a valid time of day'}
  if (sign && (Number(offsetHours) > 23 || Number(offsetMinutes) > 59)) {
    return {error: 'has an invalid time zone offset'}
  }

  // Truncate to milliseconds: "5" is 500 ms, "123999" is 123 ms.
  const millis = fraction ? Number(fraction.slice(0, 3).padEnd(3, '0')) : 0
  // setUTCFullYear, unlike Date.UTC, does not map the years 0..99 to 1900..1999.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, millis)
  const offset = sign ? (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) : 0
  const utc = new Date(date.getTime() - offset * 60_000)

  const iso = utc.toISOString()
  // Outside 0000..9999 toISOString writes an expanded year (`+010000`, `-000001`).
  if (iso.length !== 24) return {error: 'is out of range (UTC years 0000 to 9999)'}
  return {value: iso}
}
