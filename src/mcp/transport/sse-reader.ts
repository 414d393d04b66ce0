/**
 * Reads the `data` of Server-Sent Events (WHATWG HTML, "Server-sent events", 9.2.6 interpreting an
 * event stream) from a relayed stream, to observe the JSON-RPC messages of MCP's Streamable HTTP
 * transport. The stream itself is relayed untouched; an event whose data passes the limit is not
 * held: its size and top-level `id` are reported instead.
 */
import {StringDecoder} from 'node:string_decoder'
import {MemberScanner, type ScannedMembers} from './member-scanner.js'

interface SseReaderOptions {
  maxBytes: number
  onData(data: string): void
  onOversized(event: ScannedMembers & {bytes: number}): void
}

export class SseReader {
  readonly #options: SseReaderOptions
  readonly #decoder = new StringDecoder('utf8')
  #pending = ''
  #data: string[] = []
  /** Bytes (UTF-8) of the event's data so far. */
  #size = 0
  /** The event's data passed the limit: it is scanned, not kept. */
  #scanner: MemberScanner | undefined
  /** A `\r` ended the previous chunk: a `\n` starting this one belongs to the same line end. */
  #afterCarriageReturn = false
  /** The current line passed the limit: the rest of it is scanned (a data line) or dropped, up to its end. */
  #longLine: 'data' | 'other' | undefined

  constructor(options: SseReaderOptions) {
    this.#options = options
  }

  push(chunk: Buffer): void {
    let text = this.#decoder.write(chunk)
    if (this.#afterCarriageReturn && text.startsWith('\n')) text = text.slice(1)
    this.#afterCarriageReturn = text.endsWith('\r')
    if (this.#longLine) {
      const end = text.search(/\r|\n/)
      const rest = end < 0 ? text : text.slice(0, end)
      if (this.#longLine === 'data') {
        this.#size += Buffer.byteLength(rest)
        this.#scan(rest)
      }
      if (end < 0) return
      this.#longLine = undefined
      text = text.slice(text.startsWith('\r\n', end) ? end + 2 : end + 1)
    }
    const lines = (this.#pending + text).split(/\r\n|\r|\n/)
    this.#pending = lines.pop()!
    for (const line of lines) this.#line(line)
    if (this.#pending.length > this.#options.maxBytes) {
      const field = this.#field(this.#pending)
      this.#longLine = field?.name === 'data' ? 'data' : 'other'
      if (field?.name === 'data') this.#addData(field.value)
      this.#pending = ''
    }
  }

  /** A line's field name and value (9.2.6: one space after the colon is not part of the value). */
  #field(line: string): {name: string; value: string} | undefined {
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    if (colon < 0) return {name: line, value: ''}
    const value = line.slice(colon + 1)
    return {name: line.slice(0, colon), value: value.startsWith(' ') ? value.slice(1) : value}
  }

  /** A line of the stream: a blank one dispatches the event, `data` fields accumulate. */
  #line(line: string): void {
    if (line === '') return this.#dispatch()
    const field = this.#field(line)
    if (field?.name === 'data') this.#addData(field.value)
  }

  #addData(value: string): void {
    const first = this.#data.length === 0 && this.#scanner === undefined && this.#size === 0
    this.#size += Buffer.byteLength(value) + (first ? 0 : 1)
    if (this.#scanner) return this.#scan(first ? value : `\n${value}`)
    this.#data.push(value)
    if (this.#size <= this.#options.maxBytes) return
    this.#scanner = new MemberScanner()
    this.#scan(this.#data.join('\n'))
    this.#data = []
  }

  #scan(text: string): void {
    this.#scanner?.push(Buffer.from(text, 'utf8'))
  }

  #dispatch(): void {
    const data = this.#data.join('\n')
    const {found} = this.#scanner ?? {}
    const size = this.#size
    this.#data = []
    this.#size = 0
    this.#scanner = undefined
    if (found) this.#options.onOversized({bytes: size, ...found})
    else if (data !== '') this.#options.onData(data)
  }
}
