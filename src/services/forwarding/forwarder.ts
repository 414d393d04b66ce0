/**
 * One destination's sending loop (docs/forwarding.md): at least once and in index order per trail,
 * from the position stored for (trail, destination). It reads events from the store, never from
 * ingest, so a slow or absent destination never slows recording, and an event erased before it
 * was sent goes out erased. A batch is sent, then the position after it is saved: a crash between
 * the two sends that batch again on the next start.
 */
import type {StoredEvent} from '../../core/types.js'
import type {EventStore, ForwardingPosition} from '../../store/store.js'
import type {Destination} from './destination.js'
import {ForwardingError} from './errors.js'
import type {Sender} from './sender.js'

/** A trail whose events are forwarded, read from its own store. */
export interface ForwardedTrail {
  name: string
  store: EventStore
}

export interface ForwarderOptions {
  /** Where the positions and the destination's lease are kept (the trail `default`'s store). */
  store: EventStore
  destination: Destination
  sender: Sender
  /** The trails to forward, asked before each batch: trails created while serving are forwarded too. */
  trails: () => Promise<readonly ForwardedTrail[]>
  /** This process, as the holder of destination leases. */
  holder: string
  /** How long a lease lasts; it is renewed before each batch and at least every third of it. */
  leaseMs: number
  /** Capped exponential backoff between failed sends (the OpenTelemetry Collector's retry, with jitter). */
  retry: {initialMs: number; maxMs: number}
  /** Events per batch, at most (and at most BATCH_BYTES of JSON). */
  batchSize: number
  onError: (message: string) => void
}

export type ForwarderState = 'starting' | 'sending' | 'idle' | 'retrying' | 'stopped' | 'standby'

/** A batch holds at most this much event JSON, whatever its count, so one send stays small. */
const BATCH_BYTES = 4 * 1024 * 1024
const BACKOFF_MULTIPLIER = 1.5

export class Forwarder {
  state: ForwarderState = 'starting'
  lastError: {message: string; at: string} | undefined
  #positions = new Map<string, ForwardingPosition>()
  #closed = false
  #wake: (() => void) | undefined
  /** Woken while not pausing: the next pause returns at once, so no new event waits for a poll. */
  #woken = false
  #failures = 0
  #running: Promise<void> | undefined

  constructor(private readonly options: ForwarderOptions) {}

  get destination(): Destination {
    return this.options.destination
  }

  start(): void {
    this.#running ??= this.#loop()
  }

  /** New events were recorded: look for them now rather than at the next poll. */
  wake(): void {
    if (this.#wake) this.#wake()
    else this.#woken = true
  }

  async close(): Promise<void> {
    this.#closed = true
    this.wake()
    // The sender first: a send in flight ends now rather than at its timeout.
    await this.options.sender.close()
    await this.#running
    await this.options.store.forwarding.release(this.destination.id, this.options.holder).catch(() => undefined)
  }

  async #loop(): Promise<void> {
    while (!this.#closed) {
      try {
        if (!(await this.#claim())) {
          this.state = 'standby'
          await this.#pause(this.options.leaseMs / 3, false)
          continue
        }
        const sent = await this.#sendOneBatch()
        this.#failures = 0
        if (!sent) {
          this.state = 'idle'
          await this.#pause(this.options.leaseMs / 3)
        }
      } catch (error) {
        if (this.#closed) break
        await this.#failed(error)
        if (this.state === 'stopped') return
      }
    }
  }

  async #claim(): Promise<boolean> {
    const held = await this.options.store.forwarding.claim(
      this.destination.id,
      this.options.holder,
      this.options.leaseMs,
    )
    // Another process may have moved the positions while this one stood by: read them again.
    if (held && this.state === 'standby') this.#positions.clear()
    return held
  }

  /** Sends the next batch of the first trail that has one; false when every trail is caught up. */
  async #sendOneBatch(): Promise<boolean> {
    for (const {name, store} of await this.options.trails()) {
      const size = await store.count()
      const from = (await this.#position(name)).position
      if (from >= size) continue
      const batch = await this.#readBatch(store, from, size)
      const next = batch.full ? batch.events[batch.events.length - 1]!.index + 1 : size
      if (batch.events.length > 0) {
        this.state = 'sending'
        await this.options.sender.send(batch.events, name)
      }
      await this.#save(name, next)
      return true
    }
    return false
  }

  async #readBatch(store: EventStore, from: number, size: number): Promise<{events: StoredEvent[]; full: boolean}> {
    const events: StoredEvent[] = []
    let bytes = 0
    const {batchSize} = this.options
    const scan = {filter: this.destination.filter, fromIndex: from, toIndex: size, batchSize}
    for await (const event of store.scanEvents(scan)) {
      events.push(event)
      bytes += JSON.stringify(event).length
      if (events.length >= batchSize || bytes >= BATCH_BYTES) return {events, full: true}
    }
    return {events, full: false}
  }

  async #position(trail: string): Promise<ForwardingPosition> {
    if (this.#positions.size === 0) {
      for (const stored of await this.options.store.forwarding.list())
        if (stored.destination === this.destination.id) this.#positions.set(stored.trail, stored)
    }
    const known = this.#positions.get(trail)
    if (known) return known
    const fresh = {destination: this.destination.id, trail, url: this.destination.url, position: 0, updated_at: now()}
    this.#positions.set(trail, fresh)
    return fresh
  }

  async #save(trail: string, position: number, error?: string): Promise<void> {
    const held = await this.#position(trail)
    const next: ForwardingPosition = {...held, url: this.destination.url, position, updated_at: now()}
    delete next.last_error
    delete next.last_error_at
    if (error !== undefined) Object.assign(next, {last_error: error, last_error_at: next.updated_at})
    else if (this.lastError) Object.assign(next, {last_error: this.lastError.message, last_error_at: this.lastError.at})
    if (await this.options.store.forwarding.save(next, this.options.holder)) this.#positions.set(trail, next)
    // The lease ended while sending: another process has the destination now (and may send this batch again).
    else this.state = 'standby'
  }

  async #failed(error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error)
    const repeated = this.lastError?.message === message
    this.lastError = {message, at: now()}
    if (!repeated) this.options.onError(`forwarding to ${this.destination.url}: ${message}`)
    if (error instanceof ForwardingError && error.code === 'refused') this.state = 'stopped'
    else this.state = 'retrying'
    await this.#recordError(message)
    if (this.state === 'stopped') return
    this.#failures++
    const {initialMs, maxMs} = this.options.retry
    const backoff = Math.min(maxMs, initialMs * BACKOFF_MULTIPLIER ** (this.#failures - 1))
    await this.#pause(backoff * (0.5 + Math.random()))
  }

  /** The error is kept with every trail's position, so `forwarding status` on the store shows it too. */
  async #recordError(message: string): Promise<void> {
    try {
      for (const {name} of await this.options.trails())
        await this.#save(name, (await this.#position(name)).position, message)
    } catch {
      // The store itself failing is what the next attempt finds again.
    }
  }

  /** Waits `ms`, or less when new events come (`wakeable`, not for a process standing by) or on close. */
  async #pause(ms: number, wakeable = true): Promise<void> {
    if (this.#closed || (wakeable && this.#woken)) {
      this.#woken = false
      return
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.#wake = () => {
        if (!wakeable && !this.#closed) return
        clearTimeout(timer)
        resolve()
      }
    })
    this.#wake = undefined
  }
}

function now(): string {
  return new Date().toISOString()
}
