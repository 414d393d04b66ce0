/**
 * The times of an event row read from a data directory (schema.ts, EVENT_JSON): the store keeps
 * `timestamp` and `recorded_at` as INTEGER milliseconds, and a row carries them as such, to be
 * formatted while the row is decoded rather than by SQLite.
 */

/**
 * A time column for EVENT_JSON: INTEGER milliseconds as they are, made text by timeOf (SQLite's
 * strftime, twice a row, was the largest part of building a row), any other value in an array.
 */
export const timeJson = (column: string): string =>
  `CASE typeof(${column}) WHEN 'integer' THEN ${column} ELSE json_array(${column}) END`

/** The first and last millisecond of the years 0000..9999, the times of the contract. */
const TIME_RANGE = [-62_167_219_200_000, 253_402_300_799_999] as const

const DAY_MS = 86_400_000
const pad = (n: number, width: number) => String(n).padStart(width, '0')
/** The day of the last time formatted, and its `YYYY-MM-DDT`: the times of a scan share a few days. */
let formattedDay = Number.NaN
let dayPrefix = ''

/** `YYYY-MM-DDTHH:mm:ss.sssZ` of a millisecond in 0000..9999, as Date's toISOString, at a fraction of its cost. */
function isoTime(ms: number): string {
  const day = Math.floor(ms / DAY_MS)
  if (day !== formattedDay) {
    formattedDay = day
    dayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11)
  }
  const of = ms - day * DAY_MS
  return `${dayPrefix}${pad(Math.floor(of / 3_600_000), 2)}:${pad(Math.floor(of / 60_000) % 60, 2)}:${pad(
    Math.floor(of / 1000) % 60,
    2,
  )}.${pad(of % 1000, 3)}Z`
}

/** A timeJson value as timeText gives it; an integer outside 0000..9999 (a hand edit) stays that number. */
export function timeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value[0]
  return typeof value === 'number' && Number.isInteger(value) && value >= TIME_RANGE[0] && value <= TIME_RANGE[1]
    ? isoTime(value)
    : value
}
