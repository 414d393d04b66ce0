/**
 * Sends the queued events to the log, in queue order, off the path of the calls (docs/mcp.md).
 * Batches go through POST /v1/batch or the store's ingest service with the ids and times the
 * events got when their calls ended, so a batch sent again after a lost answer is an idempotent
 * retry (docs/api.md). While the log cannot record, the events wait on disk and the sender tries
 * again, waiting longer each time up to MAX_BACKOFF_MS; an event the log refuses for good (400,
 * 409) is set aside in `rejected.ndjson` beside the queue and said on stderr, never retried forever.
 */
import {appendFile} from 'node:fs/promises'
import path from 'node:path'
import type {AuditClient} from '../../cli/client.js'
import {AuditError} from '../../core/errors.js'
import {MAX_BATCH_BYTES, MAX_BATCH_EVENTS} from '../../services/ingest.js'
import type {EventQueue, QueuedBatch} from './event-queue.js'
import type {LogDestination} from './log-destination.js'

const MIN_BACKOFF_MS = 200
const MAX_BACKOFF_MS = 10_000
/** With --require-log and nothing to send, how often the log is asked whether it still answers. */
const PROBE_EVERY_MS = 2_000
/** A store opened directly is closed after this long without events, so others may open it. */
const LOCAL_LINGER_MS = 1_000
/** Room left in a batch body for the array's commas and brackets. */
const BATCH_BYTES = MAX_BATCH_BYTES - 64 * 1024

/**
 * A log that does not answer a batch within this is taken as away; the batch is sent again later,
 * an idempotent retry if the first one was recorded after all.
 */
const SEND_TIMEOUT_MS = 30_000

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/** Errors that are the log refusing the batch's content, not the log being away. */
const CONTENT_REFUSALS = new Set(['validation_error', 'invalid_json', 'payload_too_large', 'conflict'])

interface RecorderOptions {
  queue: EventQueue
  destination: LogDestination
  /** `--require-log`: no call goes while the log cannot record. */
  requireLog: boolean
  note(line: string): void
}

export class Recorder {
  readonly #options: RecorderOptions
  #client: AuditClient | undefined
  /** Whether the log recorded (or answered) last time it was asked; undefined before it was. */
  #available: boolean | undefined
  #outage: {since: number; reason: string} | undefined
  #stopping = false
  #interrupt: (() => void) | undefined
  #running: Promise<void> | undefined
  /** One event at a time after a batch was refused as a whole, to find the event at fault. */
  #singles = 0

  constructor(options: RecorderOptions) {
    this.#options = options
  }

  start(): void {
    this.#running ??= this.#run().catch((error: unknown) => {
      this.#options.note(`the sender stopped: ${(error as Error).message}; queued events wait for the next run`)
    })
  }

  record(event: unknown): void {
    this.#options.queue.append(event)
  }

  /** Why a call may not be forwarded now, or undefined when it may. */
  refusal(): string | undefined {
    const full = this.#options.queue.fullReason
    if (full !== undefined) return `${full}: the call would not be recorded`
    if (this.#options.requireLog && this.#available !== true) {
      const why = this.#outage ? `: ${this.#outage.reason}` : this.#available === undefined ? ': not reached yet' : ''
      return `${this.#options.destination.description} cannot record${why} (--require-log)`
    }
    return undefined
  }

  async #run(): Promise<void> {
    let backoff = MIN_BACKOFF_MS
    const queue = this.#options.queue
    for (;;) {
      const batch = await queue.take(this.#singles > 0 ? 1 : MAX_BATCH_EVENTS, BATCH_BYTES)
      if (batch === undefined && this.#stopping) break
      const ok = batch ? await this.#send(batch) : await this.#idle()
      if (ok) {
        backoff = MIN_BACKOFF_MS
        continue
      }
      if (this.#stopping && this.#deadlinePassed()) break
      await this.#sleep(backoff)
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2)
    }
  }

  #deadline = Infinity
  #deadlinePassed(): boolean {
    return Date.now() >= this.#deadline
  }

  /** Nothing to send: check the log (--require-log), let go of a local store, wait for events. */
  async #idle(): Promise<boolean> {
    if (this.#stopping) return true
    const {queue, requireLog, destination} = this.#options
    if (requireLog) {
      const ok = await this.#attempt((client) => withTimeout(destination.probe(client), SEND_TIMEOUT_MS))
      if (!ok) return false
      await Promise.race([queue.ready(), this.#sleepFor(PROBE_EVERY_MS)])
      return true
    }
    if (destination.local && this.#client) {
      await Promise.race([queue.ready(), this.#sleepFor(LOCAL_LINGER_MS)])
      if (queue.backlogEvents === 0 && !this.#stopping) await this.#disconnect()
      return true
    }
    await Promise.race([queue.ready(), new Promise<void>((resolve) => (this.#interrupt = resolve))])
    return true
  }

  async #send(batch: QueuedBatch): Promise<boolean> {
    let refusedWhole: AuditError | undefined
    const ok = await this.#attempt(async (client) => {
      try {
        const {results} = await withTimeout(client.ingestBatch(batch.bodies), SEND_TIMEOUT_MS)
        for (const result of results)
          if ('error' in result) await this.#setAside(batch.bodies[result.index], result.error.message)
      } catch (error) {
        if (!(error instanceof AuditError) || !CONTENT_REFUSALS.has(error.code)) throw error
        refusedWhole = error
      }
    })
    if (!ok) return false
    if (refusedWhole) {
      if (batch.bodies.length > 1) {
        this.#singles = batch.bodies.length
        return true
      }
      await this.#setAside(batch.bodies[0], refusedWhole.message)
    }
    if (this.#singles > 0) this.#singles--
    await this.#options.queue.ack(batch)
    if (batch.damaged > 0)
      this.#options.note(`${batch.damaged} damaged line(s) of the queue file ${batch.segment.file} were skipped`)
    return true
  }

  /** Runs `work` on an open client; on failure the log is marked away (said once per outage). */
  async #attempt(work: (client: AuditClient) => Promise<void>): Promise<boolean> {
    try {
      this.#client ??= await this.#options.destination.open()
      await work(this.#client)
    } catch (error) {
      this.#away(error)
      await this.#disconnect()
      return false
    }
    if (this.#outage) {
      const waited = this.#options.queue.backlogEvents
      this.#options.note(
        `${this.#options.destination.description} records again` +
          (waited > 0 ? `; sending the ${waited} queued event(s)` : ''),
      )
      this.#outage = undefined
    }
    this.#available = true
    return true
  }

  #away(error: unknown): void {
    const reason = (error as Error).message ?? String(error)
    this.#available = false
    if (this.#outage) return
    this.#outage = {since: Date.now(), reason}
    this.#options.note(
      `${this.#options.destination.description} cannot record (${reason}); events wait in ` +
        `${this.#options.queue.dir} and are sent when it is back` +
        (this.#options.requireLog ? '; calls are refused meanwhile (--require-log)' : ''),
    )
  }

  async #setAside(event: unknown, reason: string): Promise<void> {
    const file = path.join(this.#options.queue.dir, 'rejected.ndjson')
    await appendFile(file, `${JSON.stringify({reason, event})}\n`)
    const id = (event as {id?: unknown} | undefined)?.id
    this.#options.note(`the log refused event ${String(id)} for good (${reason}); it is kept in ${file}`)
  }

  async #disconnect(): Promise<void> {
    const client = this.#client
    this.#client = undefined
    await client?.close().catch(() => undefined)
  }

  #sleepFor(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.#interrupt = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  #sleep(ms: number): Promise<void> {
    return this.#stopping ? this.#sleepFor(Math.min(ms, Math.max(0, this.#deadline - Date.now()))) : this.#sleepFor(ms)
  }

  /**
   * Sends what is queued, for at most `timeoutMs`, then stops; returns the events left on disk
   * (sent by the next proxy of the same log).
   */
  async close(timeoutMs: number): Promise<number> {
    await this.#options.queue.flushed()
    this.#stopping = true
    this.#deadline = Date.now() + timeoutMs
    this.#interrupt?.()
    const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs + 100).unref())
    await Promise.race([this.#running, timer])
    const left = await this.#options.queue.close()
    await this.#disconnect()
    return left
  }
}
