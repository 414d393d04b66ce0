/**
 * The bodies the HTTP relay watches pass: a client's request body, read whole up to the message
 * limit, and the upstream's answer, relayed as it comes while its JSON-RPC messages (a JSON body,
 * or each Server-Sent Event's data) are handed to the observer. Past the limit nothing more is
 * held: only the size and the top-level `id`, `method` and `error` of the message are kept.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import {writeUpstreamHead} from './http-forward.js'
import type {OversizedLine} from './line-framer.js'
import {MemberScanner} from './member-scanner.js'
import {SseReader} from './sse-reader.js'

/** A body collected up to `max` bytes; past it, scanned for its top-level members instead. */
class BoundedBody {
  readonly #max: number
  readonly #parts: Buffer[] = []
  #size = 0
  #scanner: MemberScanner | undefined

  constructor(max: number) {
    this.#max = max
  }

  push(chunk: Buffer): void {
    this.#size += chunk.length
    if (this.#scanner) return this.#scanner.push(chunk)
    this.#parts.push(chunk)
    if (this.#size <= this.#max) return
    this.#scanner = new MemberScanner()
    for (const part of this.#parts.splice(0)) this.#scanner.push(part)
  }

  result(): {bytes: Buffer} | {tooLarge: OversizedLine} {
    if (this.#scanner) return {tooLarge: {bytes: this.#size, ...this.#scanner.found}}
    return {bytes: Buffer.concat(this.#parts)}
  }
}

/** A request body up to `max` bytes; past it, only its size and top-level id and method are kept. */
export async function readBody(
  req: IncomingMessage,
  max: number,
): Promise<{bytes: Buffer} | {tooLarge: OversizedLine}> {
  const body = new BoundedBody(max)
  for await (const chunk of req as AsyncIterable<Buffer>) body.push(chunk)
  return body.result()
}

/** Who hears of the JSON-RPC messages of an answer relayed. */
export interface AnswerWatch {
  maxBytes: number
  /** The text of one message: a JSON body, or the data of one event of a stream. */
  onMessage(text: string): void
  /** A body or an event past maxBytes, relayed without being observed. */
  onOversized(message: OversizedLine): void
}

interface BodyWatcher {
  push(chunk: Buffer): void
  end(): void
}

/** What watches a body of this content type; other types are relayed without being looked at. */
function watcherFor(type: string, watch: AnswerWatch): BodyWatcher | undefined {
  if (type.startsWith('text/event-stream')) {
    const reader = new SseReader({maxBytes: watch.maxBytes, onData: watch.onMessage, onOversized: watch.onOversized})
    return {push: (chunk) => reader.push(chunk), end: () => {}}
  }
  if (!type.startsWith('application/json')) return undefined
  const body = new BoundedBody(watch.maxBytes)
  return {
    push: (chunk) => body.push(chunk),
    end() {
      const result = body.result()
      if ('tooLarge' in result) watch.onOversized(result.tooLarge)
      else if (result.bytes.length > 0) watch.onMessage(result.bytes.toString('utf8'))
    },
  }
}

/** Relays the upstream's answer to the client, pausing for the client's pace; resolves when it ends. */
export function relayAnswer(res: ServerResponse, answer: IncomingMessage, watch: AnswerWatch): Promise<void> {
  writeUpstreamHead(res, answer)
  const watcher = watcherFor(String(answer.headers['content-type'] ?? ''), watch)
  return new Promise((resolve) => {
    answer.on('data', (chunk: Buffer) => {
      if (!res.write(chunk)) {
        answer.pause()
        res.once('drain', () => answer.resume())
      }
      watcher?.push(chunk)
    })
    answer.on('end', () => {
      res.end()
      watcher?.end()
      resolve()
    })
    answer.on('error', () => {
      res.destroy()
      resolve()
    })
    res.on('close', () => {
      answer.destroy()
      resolve()
    })
  })
}
