/**
 * Newline-delimited framing of the MCP stdio transport (MCP "Transports", stdio: messages are
 * delimited by newlines and contain no embedded newlines), as the SDK's ReadBuffer reads it. A
 * line is handed on with its own terminator, byte for byte; a line longer than the limit is never
 * held: its bytes are dropped as they come and only its size, `id` and `method` are kept.
 */
import {MemberScanner, type ScannedMembers} from './member-scanner.js'

const NEWLINE = 0x0a

export interface OversizedLine extends ScannedMembers {
  bytes: number
}

interface LineFramerOptions {
  /** The most bytes one line may have (its terminator not counted). */
  maxBytes: number
  /** A complete line, with its `\n` (none for the last line of a stream that did not end with one). */
  onLine(line: Buffer): void
  onOversized(line: OversizedLine): void
}

export class LineFramer {
  readonly #options: LineFramerOptions
  #parts: Buffer[] = []
  #held = 0
  #oversized: {scanner: MemberScanner; bytes: number} | undefined

  constructor(options: LineFramerOptions) {
    this.#options = options
  }

  push(chunk: Buffer): void {
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start)
      const end = newline < 0 ? chunk.length : newline + 1
      this.#take(chunk.subarray(start, end), newline >= 0)
      start = end
    }
  }

  /** The stream ended: a last line without a terminator is handed on as it is. */
  end(): void {
    if (this.#oversized) this.#finishOversized()
    else if (this.#held > 0) this.#emit()
  }

  #take(piece: Buffer, complete: boolean): void {
    const content = complete ? piece.length - 1 : piece.length
    if (!this.#oversized && this.#held + content > this.#options.maxBytes) {
      const scanner = new MemberScanner()
      for (const part of this.#parts) scanner.push(part)
      this.#oversized = {scanner, bytes: this.#held}
      this.#parts = []
      this.#held = 0
    }
    if (this.#oversized) {
      this.#oversized.scanner.push(piece.subarray(0, content))
      this.#oversized.bytes += content
      if (complete) this.#finishOversized()
      return
    }
    this.#parts.push(piece)
    this.#held += piece.length
    if (complete) this.#emit()
  }

  #emit(): void {
    const line = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#held)
    this.#parts = []
    this.#held = 0
    this.#options.onLine(line)
  }

  #finishOversized(): void {
    const {scanner, bytes} = this.#oversized!
    this.#oversized = undefined
    this.#options.onOversized({bytes, ...scanner.found})
  }
}
