/**
 * Finds the top-level `id` and `method` of a JSON object streamed past in chunks, without holding
 * it: what the proxy still learns from a message too large to relay, so that it can answer the
 * request it belonged to. Strings are skipped by their quotes and escapes (RFC 8259 section 7), so
 * braces and commas inside them do not count; nothing else of the value is kept.
 */
import type {JsonRpcId} from '../jsonrpc.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN = new Set([0x7b, 0x5b])
const CLOSE = new Set([0x7d, 0x5d])
const COMMA = 0x2c
const COLON = 0x3a
/** A member value longer than this is not an id or a method worth keeping. */
const MAX_CAPTURE = 1024

export interface ScannedMembers {
  id?: JsonRpcId | null
  method?: string
  /** Whether the object has a top-level `error` member (a JSON-RPC error response). */
  error?: boolean
}

export class MemberScanner {
  #depth = 0
  #inString = false
  #escaped = false
  /** At depth 1: a key is expected (after `{` or `,`), else a value is being read. */
  #expectKey = false
  #key: number[] | undefined
  #lastKey = ''
  #value: number[] | undefined
  readonly found: ScannedMembers = {}

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) this.#byte(chunk[i]!)
  }

  #byte(byte: number): void {
    if (this.#inString) {
      this.#capture(byte)
      if (this.#escaped) this.#escaped = false
      else if (byte === BACKSLASH) this.#escaped = true
      else if (byte === QUOTE) this.#endString()
      return
    }
    if (byte === QUOTE) {
      this.#inString = true
      if (this.#depth === 1 && this.#expectKey) this.#key = []
      else this.#capture(byte)
      return
    }
    if (this.#depth === 1 && (byte === COMMA || CLOSE.has(byte))) this.#endValue()
    if (OPEN.has(byte)) {
      this.#capture(byte)
      this.#depth++
      if (this.#depth === 1) this.#expectKey = byte === 0x7b
    } else if (CLOSE.has(byte)) {
      this.#depth--
      this.#capture(byte)
    } else if (this.#depth === 1 && byte === COMMA) {
      this.#expectKey = true
    } else if (this.#depth === 1 && byte === COLON) {
      if (this.#lastKey === 'id' || this.#lastKey === 'method') this.#value = []
    } else {
      this.#capture(byte)
    }
  }

  #endString(): void {
    this.#inString = false
    if (this.#key === undefined) return
    this.#lastKey = this.#key.length <= 16 ? Buffer.from(this.#key.slice(0, -1)).toString('utf8') : ''
    this.#key = undefined
    this.#expectKey = false
    if (this.#lastKey === 'error') this.found.error = true
  }

  #capture(byte: number): void {
    const target = this.#key ?? this.#value
    if (target === undefined) return
    if (target.length < MAX_CAPTURE) target.push(byte)
    else if (target === this.#value) this.#value = undefined
  }

  #endValue(): void {
    if (this.#value === undefined) return
    const text = Buffer.from(this.#value).toString('utf8').trim()
    this.#value = undefined
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return
    }
    if (this.#lastKey === 'method' && typeof value === 'string') this.found.method = value
    if (this.#lastKey === 'id' && (typeof value === 'string' || typeof value === 'number' || value === null))
      this.found.id = value
  }
}
