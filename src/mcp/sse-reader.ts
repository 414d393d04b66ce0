/**
 * Reads the `data` of Server-Sent Events (WHATWG HTML, "Server-sent events", 9.2.6 interpreting an
 * event stream) from a relayed stream, to observe the JSON-RPC messages of MCP's Streamable HTTP
 * transport. The stream itself is relayed untouched; an event whose data passes the limit is
 * skipped and reported by its size.
 */
import {StringDecoder} from 'node:string_decoder'

export interface SseReaderOptions {
  maxBytes: number
  onData(data: string): void
  onOversized(bytes: number): void
}

export class SseReader {
  readonly #options: SseReaderOptions
  readonly #decoder = new StringDecoder('utf8')
  #pending = ''
  #data: string[] = []
  #size = 0
  #skipping = false
  /** A `\r` ended the previous chunk: a `\n` starting this one belongs to the same line end. */
  #afterCarriageReturn = false
  /** The current line passed the limit: the rest of it is dropped up to its end. */
  #droppingLine = false

  constructor(options: SseReaderOptions) {
    this.#options = options
  }

  push(chunk: Buffer): void {
    let text = this.#decoder.write(chunk)
    if (this.#afterCarriageReturn && text.startsWith('\n')) text = text.slice(1)
    this.#afterCarriageReturn = text.endsWith('\r')
    if (this.#droppingLine) {
      const end = text.search(/\r|\n/)
      this.#size += end < 0 ? text.length : end
      if (end < 0) return
      this.#droppingLine = false
      text = text.slice(text.startsWith('\r\n', end) ? end + 2 : end + 1)
    }
    const lines = (this.#pending + text).split(/\r\n|\r|\n/)
    this.#pending = lines.pop()!
    for (const line of lines) this.#line(line)
    if (this.#pending.length > this.#options.maxBytes) {
      this.#size += this.#pending.length
      this.#pending = ''
      this.#skipping = true
      this.#droppingLine = true
    }
  }

  /** A line of the stream (9.2.6): a blank one dispatches the event, `data` fields accumulate. */
  #line(line: string): void {
    if (line === '') return this.#dispatch()
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    if (field !== 'data') return
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    this.#size += value.length + 1
    if (this.#size > this.#options.maxBytes) this.#skipping = true
    if (!this.#skipping) this.#data.push(value)
  }

  #dispatch(): void {
    const data = this.#data.join('\n')
    const size = this.#size
    const skipped = this.#skipping
    this.#data = []
    this.#size = 0
    this.#skipping = false
    if (skipped) this.#options.onOversized(size)
    else if (data !== '') this.#options.onData(data)
  }
}
