/**
 * Members given twice in a JSON object. RFC 8259 section 4 leaves their meaning open (names
 * "SHOULD be unique") and parsers differ: JSON.parse keeps the last, others keep the first or
 * refuse. In a record meant to be read by anyone, two readers must see the same value, so every
 * JSON text the service takes (request bodies, ingest files, evidence packages) is held to
 * I-JSON's rule (RFC 7493 section 2.3: names MUST be unique), at every depth.
 *
 * JSON.parse cannot see duplicates (a reviver gets the object already merged), so this is a
 * second, scanning pass over text that JSON.parse has accepted: it only follows strings and
 * brackets, jumping over string contents with indexOf, and decodes a member name only where it
 * holds an escape (`"a"` and `"\u0061"` are the same name).
 */
import {CodedError} from '../coded-error.js'
import {QUOTE, BACKSLASH, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COMMA} from './code-units.js'

/** Where a value sits in a document: member names and array indexes from the root. */
export type JsonPath = ReadonlyArray<string | number>

interface DuplicateMember {
  /** The path of the second member of that name (its object's path, then the name). */
  path: JsonPath
  /** The UTF-16 index in the scanned text of the opening quote of the second name. */
  offset: number
}

/** Names of an object are searched linearly up to this many (most objects), in a Set beyond. */
const LINEAR_NAMES = 16

/** The index of the quote that closes the string whose contents start at `from`. */
function stringEnd(text: string, from: number): number {
  let quote = text.indexOf('"', from)
  while (quote !== -1) {
    let before = quote - 1
    while (text.charCodeAt(before) === BACKSLASH) before--
    // An even run of backslashes escapes itself, not the quote.
    if ((quote - 1 - before) % 2 === 0) return quote
    quote = text.indexOf('"', quote + 1)
  }
  return text.length
}

/**
 * The members given twice in `text`, a JSON text that JSON.parse accepted (on other text the
 * answer is unspecified), in document order. By default the first one only. With `perElement`
 * and a text whose value is an array, the first one of each element that has one (for a batch
 * whose elements succeed or fail alone).
 */
export function findDuplicateMembers(text: string, options: {perElement?: boolean} = {}): DuplicateMember[] {
  const found: DuplicateMember[] = []
  // One slot per depth, reused by every container at that depth: no allocation per object.
  const isObject: boolean[] = []
  const names: string[][] = []
  const nameSets: Array<Set<string> | undefined> = []
  const current: Array<string | number> = []
  let depth = -1
  let expectName = false
  let reportedElement = -1
  const length = text.length
  for (let i = 0; i < length; i++) {
    switch (text.charCodeAt(i)) {
      case QUOTE: {
        const end = stringEnd(text, i + 1)
        if (expectName) {
          expectName = false
          const raw = text.slice(i + 1, end)
          const name = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw
          if (!addName(names[depth]!, nameSets, depth, name)) {
            const inElement = options.perElement === true && depth > 0 && isObject[0] === false
            if (!inElement || current[0] !== reportedElement) {
              found.push({path: [...current.slice(0, depth), name], offset: i})
              if (!inElement) return found
              reportedElement = current[0] as number
            }
          }
          current[depth] = name
        }
        i = end
        break
      }
      case OPEN_OBJECT:
        depth++
        isObject[depth] = true
        expectName = true
        ;(names[depth] ??= []).length = 0
        nameSets[depth] = undefined
        break
      case OPEN_ARRAY:
        depth++
        isObject[depth] = false
        current[depth] = 0
        break
      case COMMA:
        if (isObject[depth]) expectName = true
        else current[depth] = (current[depth] as number) + 1
        break
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        depth--
        expectName = false
        break
    }
  }
  return found
}

/** Adds a name to the object at `depth`; false when it was there already. */
function addName(list: string[], sets: Array<Set<string> | undefined>, depth: number, name: string): boolean {
  const set = sets[depth]
  if (set !== undefined) {
    if (set.has(name)) return false
    set.add(name)
    return true
  }
  if (list.includes(name)) return false
  list.push(name)
  if (list.length > LINEAR_NAMES) sets[depth] = new Set(list)
  return true
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A path in RFC 9535 JSONPath syntax, plain names in shorthand: `$.events[3].labels.env`, `$.labels["a b"]`. */
export function formatJsonPath(path: JsonPath, root = '$'): string {
  let text = root
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`
    else text += IDENTIFIER.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`
  }
  return text
}

/** A JSON text that has a member given twice: well-formed JSON, refused all the same. */
export class DuplicateMemberError extends CodedError<'duplicate_member'> {
  override name = 'DuplicateMemberError'
  /** The duplicate's path as JSONPath text. */
  readonly path: string
  constructor(path: JsonPath, subject = 'the JSON text') {
    const where = formatJsonPath(path)
    const why = 'JSON readers disagree on which one counts (RFC 7493 section 2.3)'
    super('duplicate_member', `${subject} has the member ${where} twice: ${why}`)
    this.path = where
  }
}

/** JSON.parse, refusing a member given twice anywhere with a DuplicateMemberError naming its path. */
export function parseUniqueJson(text: string, subject?: string): unknown {
  const value: unknown = JSON.parse(text)
  const [duplicate] = findDuplicateMembers(text)
  if (duplicate) throw new DuplicateMemberError(duplicate.path, subject)
  return value
}
