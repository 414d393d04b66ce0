/**
 * Policy durations (docs/api.md, Policy): a whole number followed by one unit,
 * `30s`, `15m`, `1h`, `7d`. Nothing else is accepted, so that a typo such as `1hr` or `90` is
 * a 400 rather than a silently different window.
 */
import {AuditError} from '../errors.js'

const UNIT_MS: Readonly<Record<string, number>> = {s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000}
const DURATION = /^([0-9]+)([smhd])$/

export const DURATION_HINT =
  'must be a duration: a whole number greater than 0 followed by s, m, h or d (30s, 15m, 1h, 7d)'

/** Parses `30s`, `15m`, `1h`, `7d` into milliseconds; throws a validation_error for anything else. */
export function parseDuration(text: string): number {
  const found = typeof text === 'string' ? DURATION.exec(text) : null
  const ms = found ? Number(found[1]) * UNIT_MS[found[2]!]! : NaN
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new AuditError('validation_error', `${JSON.stringify(text)} ${DURATION_HINT}`, {
      details: [{field: 'duration', message: DURATION_HINT}],
    })
  }
  return ms
}

/** Renders milliseconds for messages, largest units first: 5400000 -> `1h 30m`, 1500 -> `1.5s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return `${ms}ms`
  const parts: string[] = []
  let rest = Math.round(ms)
  for (const unit of ['d', 'h', 'm'] as const) {
    const size = UNIT_MS[unit]!
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`)
      rest %= size
    }
  }
  if (rest > 0 || parts.length === 0) parts.push(`${Number((rest / 1000).toFixed(3))}s`)
  return parts.join(' ')
}
