/**
 * The text limits of an event (docs/api.md) applied to what OTLP sends, never by refusing it:
 * names are cut and their control characters shown as U+FFFD; the full values stay in `metadata`.
 */
import {CONTROL_CHARACTERS} from '../event/text.js'

/** Limits of docs/api.md, in code points as the validator counts them. */
export const MAX_AGENT_ID = 256
export const MAX_ACTION_NAME = 256
export const MAX_SESSION_ID = 256
export const MAX_ERROR = 8192
export const MAX_LABEL_VALUE = 1024

/** The first `max` code points of a well-formed string (never half a surrogate pair). */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text
  let end = 0
  for (let count = 0; count < max && end < text.length; count++) {
    end += text.codePointAt(end)! > 0xffff ? 2 : 1
  }
  return text.slice(0, end)
}

/** Text for `agent_id` / `action_name`: control characters shown as U+FFFD, then truncated. */
export function toNameText(text: string, max: number): string {
  return truncate(text.replace(CONTROL_CHARACTERS, '\uFFFD'), max)
}

export function toLabelText(text: string): string {
  return truncate(text, MAX_LABEL_VALUE)
}

/** Nanoseconds since the epoch truncated to whole milliseconds, the precision of an event timestamp. */
export function nanosToIso(nanos: bigint): string {
  return new Date(Number(nanos / 1_000_000n)).toISOString()
}
