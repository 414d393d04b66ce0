/**
 * The bounded queue on disk between the proxy's calls and the log (docs/mcp.md: nothing is lost
 * when the log is slow or away). Every event is appended to this process's segment and synced
 * (fdatasync) before it is offered to the log, whether the log is up or not, so a proxy killed at
 * any point after writing leaves its events for the next proxy of the same log; the log recording
 * a batch moves the segment's acknowledged offset on. Events leave in the order they came, orphans
 * of earlier runs first, each with the time of its call.
 */
import {mkdir, writeFile} from 'node:fs/promises'
import {adoptOrphans, createOwnSegment, removeSegment, saveAcked, type Segment} from './queue-segment.js'

/** The default bound (`mcp-proxy --queue-limit`) of the events waiting on disk, in bytes. */
export const DEFAULT_QUEUE_LIMIT = 256 * 1024 * 1024
const RETRY_WRITE_MS = 1000

export interface QueuedBatch {
  segment: Segment
  bodies: unknown[]
  /** The segment offset after the batch's last line. */
  end: number
  /** Lines of the batch that were not JSON (a damaged orphan): skipped, counted. */
  damaged: number
}

export class EventQueue {
  readonly dir: string
  readonly #limit: number
  readonly #segments: Segment[]
  readonly #own: Segment
  #unwritten: string[] = []
  #unwrittenBytes = 0
  /** The lines of the write in progress. */
  #inFlight = {bytes: 0, events: 0}
  #writing: Promise<void> | undefined
  /** Resolved when events are on disk to be sent (one promise shared by every waiter). */
  #waiting: {promise: Promise<void>; resolve(): void} | undefined
  #closed = false
  #chain: Promise<unknown> = Promise.resolve()
  /** Why the last write failed, while writes fail. */
  #failing: string | undefined
  readonly #onProblem: (line: string) => void

  private constructor(
    dir: string,
    limit: number,
    segments: Segment[],
    own: Segment,
    onProblem: (line: string) => void,
  ) {
    this.#onProblem = onProblem
    this.dir = dir
    this.#limit = limit
    this.#segments = segments
    this.#own = own
  }

  /** Opens the queue in `dir` (created), adopting the orphaned segments found there. */
  static async open(
    dir: string,
    options: {limit?: number; describe?: string; onProblem?: (line: string) => void} = {},
  ): Promise<EventQueue> {
    await mkdir(dir, {recursive: true})
    if (options.describe !== undefined) await writeFile(`${dir}/destination.txt`, `${options.describe}\n`)
    const adopted = await adoptOrphans(dir)
    const own = await createOwnSegment(dir)
    const onProblem = options.onProblem ?? (() => {})
    return new EventQueue(dir, options.limit ?? DEFAULT_QUEUE_LIMIT, [...adopted, own], own, onProblem)
  }

  /** Bytes of events not yet recorded by the log, on disk or about to be. */
  get backlogBytes(): number {
    const onDisk = this.#segments.reduce((sum, s) => sum + (s.written - s.acked), 0)
    return onDisk + this.#inFlight.bytes + this.#unwrittenBytes
  }

  /** Events not yet recorded by the log. */
  get backlogEvents(): number {
    return this.#segments.reduce((sum, s) => sum + s.events, 0) + this.#inFlight.events + this.#unwritten.length
  }

  /** Whether another call may be let through: its event will find room within the bound. */
  hasRoom(): boolean {
    return this.#failing === undefined && this.backlogBytes < this.#limit
  }

  /** Why no call may go now, or undefined when one may (see hasRoom). */
  get fullReason(): string | undefined {
    if (this.#failing !== undefined) return `the event queue cannot be written (${this.#failing})`
    if (this.backlogBytes >= this.#limit) return `the event queue in ${this.dir} is full (${this.#limit} bytes)`
    return undefined
  }

  /** Queues one event; it is written and synced in the background, in order. */
  append(event: unknown): void {
    const line = `${JSON.stringify(event)}\n`
    this.#unwritten.push(line)
    this.#unwrittenBytes += Buffer.byteLength(line)
    this.#writing ??= this.#writeAll()
  }

  /**
   * Runs file work on the own segment one piece at a time: the thread pool would otherwise run an
   * append and a truncation of the same file in either order.
   */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(work)
    this.#chain = run.catch(() => undefined)
    return run
  }

  async #writeAll(): Promise<void> {
    while (this.#unwritten.length > 0) {
      const lines = this.#unwritten
      const bytes = this.#unwrittenBytes
      this.#unwritten = []
      this.#unwrittenBytes = 0
      this.#inFlight = {bytes, events: lines.length}
      try {
        await this.#exclusive(() => this.#write(lines, bytes))
        this.#failing = undefined
      } catch (error) {
        this.#inFlight = {bytes: 0, events: 0}
        // Kept in memory and tried again: the calls stop (hasRoom) until the disk takes them.
        this.#unwritten = [...lines, ...this.#unwritten]
        this.#unwrittenBytes += bytes
        if (this.#failing === undefined) this.#onProblem(`cannot write the queue file ${this.#own.file}: ${error}`)
        this.#failing = (error as Error).message
        if (this.#closed) break
        await new Promise((resolve) => setTimeout(resolve, RETRY_WRITE_MS))
      }
    }
    this.#writing = undefined
  }

  async #write(lines: string[], bytes: number): Promise<void> {
    const buffer = Buffer.from(lines.join(''))
    try {
      await this.#own.fd.write(buffer, 0, buffer.length, null)
      await this.#own.fd.datasync()
    } catch (error) {
      // A write cut short would leave half a line for the retry to be glued to.
      await this.#own.fd.truncate(this.#own.written).catch(() => undefined)
      throw error
    }
    this.#own.written += bytes
    this.#own.events += lines.length
    this.#inFlight = {bytes: 0, events: 0}
    this.#wake()
  }

  /** Resolves once everything appended so far is on disk. */
  async flushed(): Promise<void> {
    while (this.#writing) await this.#writing
  }

  #wake(): void {
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.resolve()
  }

  /** Resolves when events wait on disk to be sent, or the queue is closed. */
  ready(): Promise<void> {
    if (this.#closed || this.#head() !== undefined) return Promise.resolve()
    if (!this.#waiting) {
      let resolve = () => {}
      const promise = new Promise<void>((r) => (resolve = r))
      this.#waiting = {promise, resolve}
    }
    return this.#waiting.promise
  }

  #head(): Segment | undefined {
    return this.#segments.find((s) => s.written > s.acked)
  }

  /** The next events on disk, in order, at most `maxEvents` and about `maxBytes` of them. */
  async take(maxEvents: number, maxBytes: number): Promise<QueuedBatch | undefined> {
    const segment = this.#head()
    if (segment === undefined) return undefined
    const length = Math.min(segment.written - segment.acked, maxBytes)
    const buffer = Buffer.alloc(length)
    const {bytesRead} = await segment.fd.read(buffer, 0, length, segment.acked)
    const bodies: unknown[] = []
    let damaged = 0
    let at = 0
    while (bodies.length + damaged < maxEvents) {
      const newline = buffer.indexOf(0x0a, at)
      if (newline < 0 || newline >= bytesRead) break
      try {
        bodies.push(JSON.parse(buffer.toString('utf8', at, newline)))
      } catch {
        damaged++
      }
      at = newline + 1
    }
    if (at === 0) {
      // No complete line: the torn end of an orphan whose proxy died while writing it.
      if (!segment.own) {
        segment.acked = segment.written
        await this.#settle(segment)
        return this.take(maxEvents, maxBytes)
      }
      throw new Error(`the queue file ${segment.file} holds an event larger than ${maxBytes} bytes`)
    }
    return {segment, bodies, end: segment.acked + at, damaged}
  }

  /** The log recorded `batch` (or refused its events for good): it leaves the queue. */
  async ack(batch: QueuedBatch): Promise<void> {
    const {segment} = batch
    segment.acked = batch.end
    segment.events = Math.max(0, segment.events - batch.bodies.length - batch.damaged)
    await this.#settle(segment)
  }

  async #settle(segment: Segment): Promise<void> {
    if (segment.acked < segment.written) return saveAcked(segment)
    if (!segment.own) {
      this.#segments.splice(this.#segments.indexOf(segment), 1)
      return removeSegment(segment)
    }
    // All recorded: the segment starts over, unless an append landed meanwhile.
    await this.#exclusive(async () => {
      if (segment.acked === segment.written) {
        await segment.fd.truncate(0)
        segment.acked = 0
        segment.written = 0
        segment.events = 0
      }
      await saveAcked(segment)
    })
  }

  /** Stops waiting readers; returns the events still waiting, which stay on disk for the next run. */
  async close(): Promise<number> {
    this.#closed = this.#failing !== undefined
    await this.flushed()
    this.#closed = true
    this.#wake()
    const left = this.backlogEvents
    for (const segment of this.#segments) {
      if (segment.own && segment.written === segment.acked) await removeSegment(segment)
      else await segment.fd.close().catch(() => undefined)
    }
    return left
  }
}
