/**
 * How `ingest` turns the items of its input into batches: each item signed when asked, held to
 * the size of one event, gathered into batches the service takes at once, and the answers counted.
 * The command reads the input and reports; this module decides what is sent when.
 */
import type {AuditClient} from './client.js'
import type {InputItem} from './read-events.js'
import {AuditError} from '../core/errors.js'
import {signEvent} from '../core/signature/index.js'
import {assertEventSize, MAX_BATCH_BYTES, MAX_BATCH_EVENTS} from '../services/ingest.js'

export interface IngestSummary {
  accepted: number
  rejected: number
  rejections: Array<{where: string; reason: string}>
}

/**
 * Connection errors that happen before a byte of the request leaves: the server cannot have seen
 * the batch. (A reset or a timeout after connecting may come after the server read it.)
 */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
])

/** Whether the request failed before it was sent: fetch's error carries the socket's code as a cause. */
function neverSent(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as Error & {code?: unknown}).code
    if (typeof code === 'string' && NOT_SENT.has(code)) return true
    if (cause instanceof AggregateError && cause.errors.some((inner) => neverSent(inner))) return true
  }
  return false
}

/**
 * A batch failed as a whole (the server went away, the store could not write): say how far the
 * input got, so the user knows where to resume. Whether the batch in flight was recorded is known
 * when it was refused or never sent; otherwise events sent with an `id` can simply be sent again
 * (the retry of an `id`, docs/api.md, POST /v1/events).
 */
function stoppedAt(
  error: unknown,
  accepted: number,
  answeredThrough: string | undefined,
  batch: ReadonlyArray<{where: string}>,
): unknown {
  if (!(error instanceof AuditError)) return error
  const unsent = neverSent(error)
  // The server refused the batch as a whole (a 4xx: a bad key, scope or body), or said it could
  // not store it (storage_unavailable and storage_full promise that nothing was recorded).
  // Otherwise (an answer cut off, a 500) it is not known.
  const refused = error.status < 500 || error.code === 'storage_unavailable' || error.code === 'storage_full'
  if (answeredThrough === undefined) {
    // Nothing was recorded at all: the server's sentence says everything, or nothing reached it.
    if (unsent) return new AuditError(error.code, `${error.message}; nothing was sent`, {details: error.details})
    if (refused) return error
  }
  const before =
    answeredThrough === undefined
      ? 'No batch had been answered before'
      : `${accepted} events were recorded before, from the input through ${answeredThrough}`
  const inFlight = `${batch[0]!.where}${batch.length > 1 ? ` to ${batch.at(-1)!.where}` : ''}`
  const fate = unsent ? 'was not sent' : refused ? 'was not recorded' : 'may or may not have been recorded'
  const message = `${error.message}. ${before}; the batch of ${inFlight} ${fate}.`
  return new AuditError(error.code, message, {details: error.details})
}

export interface IngestBatcherOptions {
  /** Over HTTP a batch is also bounded by the server's body limit. */
  overHttp: boolean
  /** The agent's private JWK each event is signed with (`--sign-with`). */
  signingKey?: unknown
  /** Called after each answered batch, with the counts so far. */
  progress?(accepted: number, rejected: number): void
}

type Queued = Extract<InputItem, {body: unknown}> & {ordinal: number}

export class IngestBatcher {
  accepted = 0
  // Rejections are listed in input order: a line that is not JSON is known at once, an invalid
  // event only when its batch is answered. `ordinal`: the item's place in the input.
  readonly #rejections: Array<{ordinal: number; where: string; reason: string}> = []
  #read = 0
  #batch: Queued[] = []
  // The brackets of the JSON array the batch is sent as.
  #batchBytes = 2
  #answeredThrough: string | undefined

  constructor(
    private readonly client: AuditClient,
    private readonly options: IngestBatcherOptions,
  ) {}

  get rejected(): number {
    return this.#rejections.length
  }

  /** Takes the next item of the input: rejected at once, or queued and sent when a batch is full. */
  async add(item: InputItem): Promise<void> {
    const ordinal = this.#read++
    if ('error' in item) return this.#reject(ordinal, item.where, item.error)
    if (this.options.signingKey !== undefined) {
      try {
        item.body = signEvent(item.body as Record<string, unknown>, this.options.signingKey)
      } catch (error) {
        if (!(error instanceof AuditError)) throw error
        return this.#reject(ordinal, item.where, error.message)
      }
    }
    // One event is held to the size the service allows one event, whichever way it goes; over
    // HTTP a batch is also sent before it would pass the server's body limit (a comma an element).
    const bytes = Buffer.byteLength(JSON.stringify(item.body)) + 1
    try {
      assertEventSize(bytes - 1)
    } catch (error) {
      if (!(error instanceof AuditError)) throw error
      return this.#reject(ordinal, item.where, error.message)
    }
    if (this.options.overHttp) {
      if (this.#batchBytes + bytes > MAX_BATCH_BYTES) await this.flush()
      this.#batchBytes += bytes
    }
    this.#batch.push({...item, ordinal})
    if (this.#batch.length >= MAX_BATCH_EVENTS) await this.flush()
  }

  /** Sends the batch gathered so far; a batch that fails as a whole says how far the input got. */
  async flush(): Promise<void> {
    const batch = this.#batch
    if (batch.length === 0) return
    let results
    try {
      ;({results} = await this.client.ingestBatch(batch.map((item) => item.body)))
    } catch (error) {
      throw stoppedAt(error, this.accepted, this.#answeredThrough, batch)
    }
    this.#answeredThrough = batch.at(-1)!.where
    for (const result of results) {
      if ('event' in result) this.accepted++
      else this.#reject(batch[result.index]!.ordinal, batch[result.index]!.where, result.error.message)
    }
    this.#batch = []
    this.#batchBytes = 2
    this.options.progress?.(this.accepted, this.rejected)
  }

  /** The counts, and the rejections in input order. */
  summary(): IngestSummary {
    const rejections = [...this.#rejections]
      .sort((a, b) => a.ordinal - b.ordinal)
      .map(({where, reason}) => ({where, reason}))
    return {accepted: this.accepted, rejected: this.rejected, rejections}
  }

  #reject(ordinal: number, where: string, reason: string): void {
    this.#rejections.push({ordinal, where, reason})
  }
}
