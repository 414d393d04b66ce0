/**
 * The two destinations reached by HTTP POST (docs/forwarding.md): a webhook, which takes NDJSON
 * batches of stored events, and an OTLP/HTTP logs receiver, which takes protobuf
 * ExportLogsServiceRequests. 2xx is delivered; 408, 429, 5xx and network failures are tried again;
 * any other answer is a refusal that trying again will not change, and stops the destination.
 */
import type {StoredEvent} from '../../core/types.js'
import {encodeProtobufLogsRequest} from '../otlp/protobuf.js'
import {logsRequest} from './otlp-log.js'
import {ForwardingError} from './errors.js'
import {SEND_TIMEOUT_MS, type Sender} from './sender.js'

/** RFC 9110 15.5.9 Request Timeout and RFC 6585 4 Too Many Requests: the receiver asks to come back. */
const RETRIED_CLIENT_ERRORS = new Set([408, 429])
/** How much of a refusal's body is quoted in the error (status, `GET /v1/forwarding`). */
const QUOTED_BODY = 200

interface HttpTarget {
  href: string
  headers: readonly [string, string][]
}

class HttpSender implements Sender {
  /** Aborts a request in flight when the service stops: it is sent again from the stored position. */
  readonly #closing = new AbortController()

  constructor(
    private readonly target: HttpTarget,
    private readonly encode: (events: readonly StoredEvent[], trail: string) => {body: Uint8Array; type: string},
  ) {}

  async send(events: readonly StoredEvent[], trail: string): Promise<void> {
    const {body, type} = this.encode(events, trail)
    let response: Response
    try {
      response = await fetch(this.target.href, {
        method: 'POST',
        headers: [['content-type', type], ['x-audit-trail-trail', trail], ...this.target.headers],
        body: new Uint8Array(body),
        redirect: 'error',
        signal: AbortSignal.any([AbortSignal.timeout(SEND_TIMEOUT_MS), this.#closing.signal]),
      })
    } catch (error) {
      const reason = (error as Error & {cause?: Error}).cause?.message ?? (error as Error).message
      throw new ForwardingError('not_delivered', `POST ${this.#shown()}: ${reason}`, {cause: error})
    }
    const text = await response.text().catch(() => '')
    if (response.ok) return
    const quoted = text.trim().slice(0, QUOTED_BODY)
    const permanent = response.status < 500 && !RETRIED_CLIENT_ERRORS.has(response.status)
    throw new ForwardingError(
      permanent ? 'refused' : 'not_delivered',
      `POST ${this.#shown()}: HTTP ${response.status}${quoted ? `: ${quoted}` : ''}` +
        (permanent ? ' (refused: sending stopped until the service restarts)' : ''),
    )
  }

  async close(): Promise<void> {
    this.#closing.abort()
  }

  #shown(): string {
    const url = new URL(this.target.href)
    url.search = ''
    return url.href
  }
}

/** A webhook: each batch one POST of `application/x-ndjson`, a stored event per line. */
export function webhookSender(target: HttpTarget): Sender {
  return new HttpSender(target, (events) => ({
    body: new TextEncoder().encode(events.map((event) => `${JSON.stringify(event)}\n`).join('')),
    type: 'application/x-ndjson',
  }))
}

/** OTLP/HTTP logs, binary protobuf (OTLP specification, "OTLP/HTTP Request"). */
export function otlpSender(target: HttpTarget): Sender {
  return new HttpSender(target, (events, trail) => ({
    body: encodeProtobufLogsRequest(logsRequest(events, trail)),
    type: 'application/x-protobuf',
  }))
}
