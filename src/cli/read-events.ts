/**
 * Reads events for `audit-trail ingest` from a file or stdin: a JSON array, a single JSON object,
 * or NDJSON. NDJSON is streamed line by line; a JSON array or object is parsed whole (it is one
 * JSON value). Yields each element with the position a user can find it by; an element that gives
 * a member twice is rejected naming its path, as the service refuses it (RFC 7493 section 2.3).
 */
import {isUtf8} from 'node:buffer'
import {createReadStream} from 'node:fs'
import {createInterface} from 'node:readline'
import type {Readable} from 'node:stream'
import {DuplicateMemberError, findDuplicateMembers, type JsonPath} from '../core/json/duplicate-members.js'
import {InputError} from './input-error.js'

/** The error this module throws for input that cannot be read as events. */
export {InputError}

export type InputItem = {where: string; body: unknown} | {where: string; error: string}

export async function* readEventInput(source: Readable): AsyncGenerator<InputItem> {
  // Lines are split on the bytes, one character a byte (no UTF-8 sequence holds a CR or LF byte),
  // and each is then checked as UTF-8: a decoder would turn invalid bytes into U+FFFD silently, as
  // the service refuses to (RFC 8259 section 8.1).
  source.setEncoding('latin1')
  const lines = createInterface({input: source, crlfDelay: Infinity})
  let mode: 'unknown' | 'ndjson' | 'whole' = 'unknown'
  const whole: string[] = []
  let lineNumber = 0
  for await (const bytes of lines) {
    lineNumber++
    const raw = Buffer.from(bytes, 'latin1')
    if (!isUtf8(raw)) {
      if (mode === 'whole') throw new InputError('not_utf8', `line ${lineNumber} is not valid UTF-8`)
      yield {where: `line ${lineNumber}`, error: 'not valid UTF-8'}
      continue
    }
    let line = raw.toString('utf8')
    // A byte order mark some editors write first: RFC 8259 section 8.1 lets a parser ignore it.
    if (lineNumber === 1 && line.startsWith('\uFEFF')) line = line.slice(1)
    if (mode === 'whole') {
      whole.push(line)
      continue
    }
    if (line.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      if (mode === 'unknown') {
        // The first value spans several lines: the input is one JSON document.
        mode = 'whole'
        whole.push(line)
        continue
      }
      yield {where: `line ${lineNumber}`, error: parseProblem(line, error as Error)}
      continue
    }
    if (mode === 'unknown' && Array.isArray(value)) {
      mode = 'whole'
      whole.push(line)
      continue
    }
    mode = 'ndjson'
    const [duplicate] = findDuplicateMembers(line)
    if (duplicate) yield {where: `line ${lineNumber}`, error: new DuplicateMemberError(duplicate.path, 'it').message}
    else yield {where: `line ${lineNumber}`, body: value}
  }
  if (mode === 'whole') yield* documentItems(whole.join('\n'))
}

/** The elements of a JSON array, or the one object, given as one document. */
function* documentItems(text: string): Generator<InputItem> {
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (error) {
    throw new InputError('not_json', `the input is neither NDJSON nor a JSON document: ${(error as Error).message}`, {
      cause: error,
    })
  }
  const duplicates = findDuplicateMembers(text, {perElement: true})
  const refused = (path: JsonPath) => ({error: new DuplicateMemberError(path, 'the input').message})
  if (Array.isArray(document)) {
    const byElement = new Map(duplicates.map((d) => [d.path[0], d.path]))
    for (const [i, body] of document.entries()) {
      const duplicate = byElement.get(i)
      yield {where: `element ${i}`, ...(duplicate ? refused(duplicate) : {body})}
    }
  } else {
    yield {where: 'the object', ...(duplicates[0] ? refused(duplicates[0].path) : {body: document})}
  }
}

/**
 * JSON.parse's complaint about one line: "not valid JSON at column C: <the parser's reason>", the
 * 1-based column (in characters) where it stopped when the parser says where. Its quote of the
 * line is left out: the line may be long, and its column is given.
 */
export function parseProblem(line: string, error: Error): string {
  const at = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?/.exec(error.message)
  const atEnd = /^Unexpected end of JSON input/.test(error.message)
  const reason = error.message
    .replace(/ in JSON at position \d+(?: \(line \d+ column \d+\))?/, '')
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ of JSON input$/, ' of the line')
  const offset = at ? Number(at[1]) : atEnd ? line.length : undefined
  if (offset === undefined) return `not valid JSON: ${reason}`
  return `not valid JSON at column ${[...line.slice(0, offset)].length + 1}: ${reason}`
}

export function openInput(file: string | undefined): Readable {
  if (file === undefined || file === '-') return process.stdin
  return createReadStream(file)
}
