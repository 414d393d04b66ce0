/**
 * Parses an evidence package (docs/verification.md) from chunks of bytes, so that a package is
 * never one JavaScript string: V8 caps a string at about 512 MiB (a package of some 280,000
 * events), and the text of a whole package beside its parsed form doubled the memory of a check.
 *
 * The parser only finds where things begin and end; JSON.parse does all decoding and validation.
 * The contents of the top-level `events` array and `proofs` and `receipts` objects are cut at commas between
 * their elements (members), and each run of whole elements is parsed as `[run]` (`{run}`):
 * about one JSON.parse per chunk read. Everything else (the document with those two containers
 * left empty) is parsed at the end as one small "skeleton" document. A run after a cut must not be
 * empty (that would be a doubled or trailing comma), so a document is accepted exactly when
 * JSON.parse accepts it, and yields the same value, except that a member given twice, at any
 * depth, is refused (tools that keep the first and tools that keep the last would verify
 * different packages): each parsed text is also scanned for duplicates (core/json).
 *
 * Pure: the caller reads the bytes (see src/cli/package-file.ts).
 */
import {DuplicateMemberError, findDuplicateMembers, type JsonPath} from '../json/duplicate-members.js'
import type {EvidencePackage} from './package.js'
import {QUOTE, BACKSLASH, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COMMA, COLON} from '../json/code-units.js'

export {DuplicateMemberError}

/** JSON's own whitespace is space, tab, LF and CR; anything else is content. */
const NOT_WHITESPACE = /[^ \t\n\r]/

/** A package that is not JSON; `offset` is the byte of the file where JSON.parse stopped (0-based). */
export class PackageSyntaxError extends SyntaxError {
  override name = 'PackageSyntaxError'
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message)
  }
}

const POSITION = / JSON at position (\d+)/

/**
 * Where in `text` JSON.parse failed, as a UTF-16 index. V8 names the position in most messages,
 * but not in "Unexpected token"; then the position is the end of the shortest prefix whose parse
 * fails before its end (every shorter prefix is the start of some valid JSON text).
 */
function failurePosition(text: string, error: Error): number {
  const named = POSITION.exec(error.message)
  if (named) return Number(named[1])
  if (!error.message.startsWith('Unexpected token')) return text.length
  const failsInside = (end: number): boolean => {
    try {
      JSON.parse(text.slice(0, end))
      return false
    } catch (prefixError) {
      const message = (prefixError as Error).message
      const at = POSITION.exec(message)
      return at ? Number(at[1]) < end : message.startsWith('Unexpected token')
    }
  }
  let low = 1
  let high = text.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (failsInside(middle)) high = middle
    else low = middle + 1
  }
  return low - 1
}

/** The bytes of the UTF-8 encoding of text[0, position). */
const bytesBefore = (text: string, position: number): number => Buffer.byteLength(text.slice(0, position))

/** JSON.parse's reason without the copy of the text and the position it gives in it. */
function reasonOf(error: Error): string {
  return error.message
    .replace(/, (\.\.\.)?".*"(\.\.\.)? is not valid JSON$/s, '')
    .replace(/ (in|after) JSON at position \d+.*$/s, '')
}

type Container = 'events' | 'proofs' | 'receipts' | undefined

/** Where the scan of one chunk stands. */
interface ChunkScan {
  chunk: Buffer
  i: number
  /** Start of the bytes not yet copied to the skeleton (a container's contents never are). */
  copyFrom: number
  /** The last comma between elements of the container in this chunk (-1: none). */
  lastCut: number
  /** The next backslash at or after i, or an earlier one still to be passed (-1: none left). */
  backslash: number
}

export class PackageParser {
  /**
   * `onEvents`: told of each run of the `events` array as it is parsed (the text between brackets,
   * its number of elements and how many came before), for hashing on another thread.
   */
  constructor(private readonly onEvents?: (text: string, count: number, before: number) => void) {}

  #depth = 0
  #inString = false
  #escaped = false
  /** The depth-2 container being split, if any. */
  #container: Container
  /** Decoded name of the last depth-1 key, once its ':' was seen. */
  #key: string | undefined
  /** The first member seen twice: refused once the whole document is known to be JSON. */
  #duplicate: JsonPath | undefined
  /** The containers whose contents were parsed here (the skeleton holds them empty). */
  readonly #split = new Set<Container>()
  /** The capture in progress: bytes of earlier chunks, and where it starts in the current one (-1: none). */
  #carry: Buffer[] = []
  #captureFrom = -1
  #capturing: 'key' | 'run' | undefined
  /** Whether the run being read follows a comma (then it must not be empty). */
  #afterCut = false
  #lastString: string | undefined
  #skeleton: Buffer[] = []
  /** Where each piece of the skeleton starts, in the skeleton and in the file (for error positions). */
  readonly #pieces: Array<{at: number; offset: number}> = []
  #skeletonBytes = 0
  /** Bytes of the chunks before the current one, and the file offset where the capture began. */
  #consumed = 0
  #captureOffset = 0
  readonly #events: unknown[] = []
  readonly #proofs: Record<string, unknown> = {}
  readonly #receipts: Record<string, unknown> = {}
  #previousPath: unknown[] = []

  push(chunk: Buffer): void {
    const scan: ChunkScan = {chunk, i: 0, copyFrom: 0, lastCut: -1, backslash: chunk.indexOf(BACKSLASH)}
    if (this.#capturing !== undefined) this.#captureFrom = 0
    const length = chunk.length
    try {
      while (scan.i < length) {
        if (!this.#inString) {
          this.#structural(scan)
          scan.i++
        } else if (!this.#skipString(scan)) break
      }
      if (this.#capturing === 'run' && scan.lastCut >= this.#captureFrom) {
        // The whole elements read so far are parsed now; the rest waits for the next chunk.
        this.#parseRun(this.#captured(chunk, scan.lastCut), true)
        this.#afterCut = true
        this.#beginCapture('run', scan.lastCut + 1)
      }
    } catch (error) {
      // A piece of events or proofs is parsed before the rest of the document before it: an
      // error there is the first one of the file only if the skeleton up to here is sound.
      if (!(error instanceof PackageSyntaxError)) throw error
      if (this.#container === undefined) this.#toSkeleton(chunk, scan.copyFrom, scan.i)
      throw this.#skeletonError() ?? error
    }
    if (this.#capturing !== undefined) this.#carry.push(Buffer.from(chunk.subarray(this.#captureFrom)))
    if (this.#capturing !== 'run') this.#toSkeleton(chunk, scan.copyFrom, length)
    this.#consumed += length
  }

  /**
   * Inside a string: on past its closing quote (a key being captured is parsed there) or past the
   * byte a backslash escapes. False when the chunk ends inside the string.
   */
  #skipString(scan: ChunkScan): boolean {
    const chunk = scan.chunk
    if (this.#escaped) {
      this.#escaped = false
      scan.i++
      return true
    }
    // Jump to the next quote; a backslash before it escapes the byte after the backslash.
    const quote = chunk.indexOf(QUOTE, scan.i)
    if (scan.backslash !== -1 && scan.backslash < scan.i) scan.backslash = chunk.indexOf(BACKSLASH, scan.i)
    if (scan.backslash !== -1 && (quote === -1 || scan.backslash < quote)) {
      scan.i = scan.backslash + 1
      this.#escaped = true
      return true
    }
    if (quote === -1) return false
    scan.i = quote + 1
    this.#inString = false
    if (this.#capturing === 'key') {
      const offset = this.#captureOffset
      this.#lastString = parseAt(this.#captured(chunk, scan.i), (position) => offset + position) as string
    }
    return true
  }

  /** A byte outside strings: depth, the depth-1 key, and the cuts and ends of a split container. */
  #structural(scan: ChunkScan): void {
    const {chunk, i} = scan
    const byte = chunk[i]!
    if (byte === QUOTE) {
      this.#inString = true
      if (this.#depth === 1) this.#beginCapture('key', i)
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      this.#depth++
      if (this.#depth === 2) this.#openContainer(scan, byte)
    } else if (byte === COMMA && this.#depth === 2) {
      if (this.#container) scan.lastCut = i
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (this.#depth === 2 && this.#container) {
        this.#parseRun(this.#captured(chunk, i), false)
        this.#container = undefined
        scan.copyFrom = i
        scan.lastCut = -1
      }
      this.#depth--
      if (this.#depth <= 1) this.#key = undefined
    } else if (byte === COLON && this.#depth === 1) {
      this.#key = this.#lastString
    } else if (byte === COMMA && this.#depth === 1) {
      this.#key = undefined
      this.#lastString = undefined
    }
  }

  /** A value at depth 2 opens: `events` (an array), `proofs` or `receipts` (objects) are split. */
  #openContainer(scan: ChunkScan, byte: number): void {
    this.#container =
      this.#key === 'events' && byte === OPEN_ARRAY
        ? 'events'
        : (this.#key === 'proofs' || this.#key === 'receipts') && byte === OPEN_OBJECT
          ? this.#key
          : undefined
    if (!this.#container) return
    this.#split.add(this.#container)
    this.#toSkeleton(scan.chunk, scan.copyFrom, scan.i + 1)
    this.#beginCapture('run', scan.i + 1)
    this.#afterCut = false
  }

  /** The parsed package, once every chunk was pushed. Throws SyntaxError as JSON.parse does. */
  finish(): EvidencePackage {
    if (this.#capturing === 'run') {
      // Unterminated: hand what is left to JSON.parse so that the error is its own. (A key being
      // captured is in the skeleton already.)
      this.#pieces.push({at: this.#skeletonBytes, offset: this.#captureOffset})
      this.#skeleton.push(...this.#carry)
      this.#carry = []
    }
    this.#previousPath = []
    const toFile = (position: number): number => this.#skeletonToFile(position)
    const skeletonText = Buffer.concat(this.#skeleton).toString('utf8')
    const skeleton = parseAt(skeletonText, toFile) as Record<string, unknown>
    this.#duplicate ??= findDuplicateMembers(skeletonText)[0]?.path
    if (this.#duplicate !== undefined) throw new DuplicateMemberError(this.#duplicate, 'the package')
    if (skeleton && typeof skeleton === 'object' && !Array.isArray(skeleton)) {
      if (this.#split.has('events')) skeleton.events = this.#events
      if (this.#split.has('proofs')) skeleton.proofs = this.#proofs
      if (this.#split.has('receipts')) skeleton.receipts = this.#receipts
    }
    return skeleton as unknown as EvidencePackage
  }

  #beginCapture(kind: 'key' | 'run', at: number): void {
    this.#capturing = kind
    this.#captureFrom = at
    this.#captureOffset = this.#consumed + at
    this.#carry = []
  }

  /** The file offset of a byte of the skeleton. */
  #skeletonToFile(position: number): number {
    const pieces = this.#pieces
    let piece = pieces.length - 1
    while (piece > 0 && pieces[piece]!.at > position) piece--
    return piece < 0 ? position : pieces[piece]!.offset + position - pieces[piece]!.at
  }

  /** The error in the skeleton read so far, if it is not the start of some JSON text. */
  #skeletonError(): PackageSyntaxError | undefined {
    const text = Buffer.concat(this.#skeleton).toString('utf8')
    try {
      JSON.parse(text)
    } catch (error) {
      const position = failurePosition(text, error as Error)
      if (position >= text.length) return undefined
      const offset = this.#skeletonToFile(bytesBefore(text, position))
      return new PackageSyntaxError(`${reasonOf(error as Error)} at byte ${offset}`, offset)
    }
    return undefined
  }

  #toSkeleton(chunk: Buffer, from: number, to: number): void {
    if (from >= to) return
    this.#pieces.push({at: this.#skeletonBytes, offset: this.#consumed + from})
    this.#skeleton.push(Buffer.from(chunk.subarray(from, to)))
    this.#skeletonBytes += to - from
  }

  #captured(chunk: Buffer, end: number): string {
    const tail = chunk.subarray(this.#captureFrom, end)
    const text =
      this.#carry.length === 0 ? tail.toString('utf8') : Buffer.concat([...this.#carry, tail]).toString('utf8')
    this.#carry = []
    this.#capturing = undefined
    this.#captureFrom = -1
    return text
  }

  // Proofs of neighbouring leaves repeat the same upper nodes: 100,000 proofs hold about 1.7
  // million hashes but only about 200,000 different ones. Where a proof repeats the hash at the
  // same position of the proof before it, keep one string for both (strings are immutable, so
  // the value is the same): the parsed proofs shrink to a fraction.
  #shareHashes(proof: unknown): void {
    const path = (proof as {audit_path?: unknown} | null)?.audit_path
    if (!Array.isArray(path)) return
    const previous = this.#previousPath
    for (let i = 0; i < path.length && i < previous.length; i++) {
      if (path[i] === previous[i]) path[i] = previous[i]
    }
    this.#previousPath = path
  }

  // Whole elements (members) of the container, as they stand between its brackets and commas.
  #parseRun(text: string, endsAtCut: boolean): void {
    // The run starts one byte after the '[', '{' or ',' before it; the wrapper adds one character.
    const start = this.#captureOffset
    if (!NOT_WHITESPACE.test(text)) {
      // Nothing between '[' and ']' is an empty container; nothing before or after a comma is a syntax error.
      if (endsAtCut || this.#afterCut) {
        const end = start + Buffer.byteLength(text)
        throw new PackageSyntaxError(`Unexpected ',' or empty element in "${this.#container}" at byte ${end}`, end)
      }
      return
    }
    const toFile = (position: number): number => start + Math.max(0, position - 1)
    if (this.#container === 'events') {
      const run = `[${text}]`
      const events = parseAt(run, toFile) as unknown[]
      const duplicate = this.#duplicate === undefined ? findDuplicateMembers(run)[0] : undefined
      if (duplicate)
        this.#duplicate = ['events', this.#events.length + Number(duplicate.path[0]), ...duplicate.path.slice(1)]
      this.onEvents?.(text, events.length, this.#events.length)
      for (const event of events) this.#events.push(event)
    } else {
      const run = `{${text}}`
      const members = parseAt(run, toFile) as Record<string, unknown>
      const container = this.#container === 'proofs' ? 'proofs' : 'receipts'
      const target = container === 'proofs' ? this.#proofs : this.#receipts
      const duplicate = this.#duplicate === undefined ? findDuplicateMembers(run)[0] : undefined
      if (duplicate) this.#duplicate = [container, ...duplicate.path]
      // defineProperty, not assignment: a member named __proto__ stays an ordinary member, as in JSON.parse.
      for (const key of Object.keys(members)) {
        const value = members[key]
        // A member given twice in two runs (each run alone has it once).
        if (Object.hasOwn(target, key)) this.#duplicate ??= [container, key]
        if (target === this.#proofs) this.#shareHashes(value)
        Object.defineProperty(target, key, {value, enumerable: true, writable: true, configurable: true})
      }
    }
  }
}

/**
 * JSON.parse, whose error becomes a PackageSyntaxError at a byte of the file: `toFile` maps a byte
 * offset in the UTF-8 encoding of `text` to one in the file.
 */
function parseAt(text: string, toFile: (position: number) => number): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    const offset = toFile(bytesBefore(text, failurePosition(text, error as Error)))
    throw new PackageSyntaxError(`${reasonOf(error as Error)} at byte ${offset}`, offset)
  }
}

/** Parses a whole package held in memory (tests, small inputs) the same way. */
export function parsePackageBytes(bytes: Buffer, chunkSize = 4 * 1024 * 1024): EvidencePackage {
  const parser = new PackageParser()
  for (let i = 0; i < bytes.length; i += chunkSize) parser.push(bytes.subarray(i, i + chunkSize))
  return parser.finish()
}
