/**
 * The rows of a data directory's chain scans (hashed-scan.ts), in the form that costs the reading
 * thread least. EVENT_JSON formats hashes, digests and times in SQL, on the thread that owns the
 * sql.js database; this form leaves a BLOB's hex upper-case and an INTEGER time as its number, and
 * `scanRowEvent` finishes them on the hashing thread, giving exactly the event toEvent gives of
 * EVENT_JSON (test/store/scan-row.test.ts compares the two over hand-edited rows).
 */
import type {StoredEvent} from '../../core/types.js'
import {EVENT_ROW, rowEvent, sqlName, type RowField} from '../event-row.js'
import {timeText} from './schema.js'

/**
 * The times JavaScript formats as SQLite's strftime does (`YYYY-MM-DDTHH:mm:ss.sssZ`, years 0000
 * to 9999); outside them SQLite's own text is kept (it writes year -1 as `-001`, JavaScript as `-000001`).
 */
const FIRST_TIME_MS = -62_167_219_200_000
const LAST_TIME_MS = 253_402_300_799_999

/**
 * A cell: a BLOB hash or digests value as its hex, an INTEGER time in range as its number, NULL as
 * null, and any other value (only a hand-edited row holds one) wrapped in a one-member array,
 * holding what EVENT_JSON reads there.
 */
function scanCell(field: RowField): string {
  const name = sqlName(field.name)
  if (field.kind === 'hash' || field.kind === 'digests') {
    return `CASE typeof(${name}) WHEN 'blob' THEN hex(${name}) WHEN 'null' THEN NULL ELSE json_array(${name}) END`
  }
  if (field.kind === 'time') {
    return `CASE WHEN typeof(${name}) = 'integer' AND ${name} BETWEEN ${FIRST_TIME_MS} AND ${LAST_TIME_MS} THEN ${name}
      WHEN ${name} IS NULL THEN NULL ELSE json_array(${timeText(name)}) END`
  }
  return name
}

/** One row as a JSON array text in EVENT_ROW's order, for scanRowEvent. */
export const SCAN_JSON = `json_array(${EVENT_ROW.map(scanCell).join(', ')})`

const DAY_MS = 86_400_000
const TWO = Array.from({length: 100}, (_, n) => String(n).padStart(2, '0'))
const THREE = Array.from({length: 1000}, (_, n) => String(n).padStart(3, '0'))

/**
 * A formatter of `new Date(ms).toISOString()` for the milliseconds of years 0000 to 9999: the date
 * part from Date once a day, the time of day by arithmetic (toISOString for every value costs
 * several times as much). Each keeps its own last day: one per column, whose times mostly share it.
 */
export function isoTimes(): (ms: number) => string {
  let dayStart = Number.NaN
  let dayPrefix = ''
  return (ms) => {
    const day = Math.floor(ms / DAY_MS) * DAY_MS
    if (day !== dayStart) {
      dayPrefix = new Date(day).toISOString().slice(0, 11)
      dayStart = day
    }
    const inDay = ms - day
    const seconds = Math.floor(inDay / 1000)
    const hours = TWO[Math.floor(seconds / 3600)]
    const minutes = TWO[Math.floor(seconds / 60) % 60]
    return `${dayPrefix}${hours}:${minutes}:${TWO[seconds % 60]}.${THREE[inDay % 1000]}Z`
  }
}

const HEX_CELLS = EVENT_ROW.flatMap((field, i) => (field.kind === 'hash' || field.kind === 'digests' ? [i] : []))
const TIME_CELLS = EVENT_ROW.flatMap((field, i) => (field.kind === 'time' ? [i] : []))
const TIME_FORMATS = TIME_CELLS.map(() => isoTimes())

/** A SCAN_JSON text as the StoredEvent toEvent reads from the same row's EVENT_JSON. */
export function scanRowEvent(text: string): StoredEvent {
  const row = JSON.parse(text) as unknown[]
  for (const i of HEX_CELLS) {
    const value = row[i]
    if (typeof value === 'string') row[i] = value.toLowerCase()
    else if (Array.isArray(value)) row[i] = value[0]
  }
  for (let t = 0; t < TIME_CELLS.length; t++) {
    const i = TIME_CELLS[t]!
    const value = row[i]
    if (typeof value === 'number') row[i] = TIME_FORMATS[t]!(value)
    else if (Array.isArray(value)) row[i] = value[0]
  }
  return rowEvent(row)
}
