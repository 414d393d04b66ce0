/** Human output: colour only on a terminal and never with NO_COLOR; plain aligned tables. */
import {Chalk} from 'chalk'
import {distance} from 'fastest-levenshtein'
import {AuditError} from '../core/errors.js'

/** NO_COLOR (no-color.org): set to a non-empty value, it turns colour off. */
const noColour = Boolean(process.env.NO_COLOR)

export const colour = new Chalk({level: process.stdout.isTTY && !noColour ? 1 : 0})

/** The progress spinner's colour (on stderr): none with NO_COLOR, which ora does not read itself. */
export const spinnerColour: 'cyan' | false = noColour ? false : 'cyan'

/**
 * Whether a progress line can be drawn on `stream`: a terminal that reports its width. On a
 * terminal of 0 columns (a pty nobody sized: `script`, `docker run -t` before a resize) ora's
 * redraw never ends.
 */
export function canShowProgress(stream: {isTTY?: boolean; columns?: number}): boolean {
  return stream.isTTY === true && (stream.columns ?? 0) > 0
}

/** Left-aligned columns separated by two spaces; long cells are cut with an ellipsis. */
export function formatTable(headers: string[], rows: Array<Array<string | number | boolean>>, maxWidth = 60): string {
  const cells = rows.map((row) =>
    row.map((cell) => {
      const text = String(cell)
      return text.length > maxWidth ? `${text.slice(0, maxWidth - 1)}…` : text
    }),
  )
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)))
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [colour.bold(line(headers)), ...cells.map(line)].join('\n')
}

/** `1 event`, `8 events`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

export const ok = (text: string): string => colour.green(text)
export const bad = (text: string): string => colour.red(text)

/**
 * An error as one line for stderr: its message, then each problem of its `details` that the
 * message does not already state. A policy error's message names the rule and its first problem
 * and counts the others ("(and 2 more problems)"): here they are listed instead, each once.
 */
export function problemText(error: unknown): string {
  const message = (error as Error).message
  const details = (error as {details?: Array<{field: string; message: string}>}).details ?? []
  // Stated already: with its field, or its complaint alone when no other detail makes the same one.
  const stated = (d: {field: string; message: string}) =>
    message.includes(`${d.field} ${d.message}`) ||
    (message.includes(d.message) && details.filter((other) => other.message === d.message).length === 1)
  const rest = details.filter((d) => !stated(d)).map((d) => `${d.field} ${d.message}`)
  if (rest.length === 0) return message
  return `${message.replace(/ \(and \d+ more problems?\)$/, '')}; ${rest.join('; ')}`
}

/**
 * A server's 401 in words for a CLI user: the server's sentence tells an HTTP client which header
 * to send; on the command line the key comes from --api-key or AUDIT_TRAIL_API_KEY.
 */
export function withApiKeyHint(error: unknown, server: string, keyGiven: boolean): unknown {
  if (!(error instanceof AuditError) || error.code !== 'unauthorized') return error
  const message = keyGiven
    ? `the server at ${server} refused the API key given with --api-key or AUDIT_TRAIL_API_KEY (${error.message}): ` +
      `give a key of its --api-keys file`
    : `the server at ${server} needs an API key: give it with --api-key KEY or the environment variable ` +
      `AUDIT_TRAIL_API_KEY`
  return new AuditError('unauthorized', message, {details: error.details})
}

/**
 * The candidate closest to what the user typed (Levenshtein distance), when it is close enough
 * to be a typing slip: at most two edits, or a third of the word.
 */
export function nearest(typed: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(typed.length / 3)) + 1
  for (const candidate of candidates) {
    const d = distance(typed, candidate)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/** oclif's "Nonexistent flag: --sever" with the nearest flag the command has, if one is near. */
export function withFlagHint(message: string, flagNames: readonly string[]): string {
  const unknown = /^Nonexistent flags?: (--?[^\s,]+)/.exec(message)?.[1]
  if (unknown === undefined) return message
  const near = nearest(unknown.replace(/^--?/, '').split('=')[0]!, flagNames)
  return near === undefined ? message : `${message}; did you mean --${near}?`
}
