/**
 * Ingest: validates events and has the store record them durably (docs/api.md); the
 * store sequences them under its own write lock (core/event/sequence.ts).
 *
 * Group commit: requests that arrive while a write is in flight queue up and are written together
 * by the next flush, so concurrent requests share one transaction and one fsync. A group is
 * bounded in events and bytes (one journal line, one SQL statement), and a group that fails takes
 * only its own requests down. The Merkle tree changes only after the store has made a flush
 * durable, so a failed write (503) leaves no trace.
 */
import {checkWritable, type AgentScope} from '../core/auth/agent-scope.js'
import {AuditError} from '../core/errors.js'
import {approximateJsonSize, validateEvent, type SequenceOutcome, type SequenceRequest} from '../core/event/index.js'
import type {MerkleTree} from '../core/merkle/index.js'
import type {SigningJwk} from '../core/jws/jwk.js'
import {isSignatureJob, SignatureChecker, type SignatureJob} from '../core/signature/index.js'
import {signaturePool, type SignaturePool} from '../threads/signature-pool.js'
import type {StoredEvent, ValidatedEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import {appendAt, catchUpTree} from './tree-sync.js'
import {v7 as uuidv7} from 'uuid'

export const MAX_BATCH_EVENTS = 1000
/** The largest body of POST /v1/batch (docs/api.md, Ingest: more is 413). */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024
/** The body limit of POST /v1/events, and of one /v1/batch element as JSON text. */
export const MAX_EVENT_BYTES = 1024 * 1024

/** One event is held to MAX_EVENT_BYTES of JSON wherever it arrives (alone, in a batch, from a file). */
export function assertEventSize(bytes: number, limit = MAX_EVENT_BYTES): void {
  if (bytes > limit)
    throw new AuditError(
      'validation_error',
      `the event is ${bytes} bytes of JSON, more than the ${limit} bytes of one event`,
    )
}

type BatchResult = {status: 201 | 207; results: BatchItemResult[]}

interface BatchOptions {
  /** The most bytes of JSON text of one element, when the body was larger than that. */
  maxElementBytes?: number
  /** Elements refused before validation (a member given twice in its text), by index. */
  refused?: ReadonlyMap<number, AuditError>
  /** The agents the request's key may write (docs/security.md); an element of another is refused with 403. */
  scope?: AgentScope
}

/** One element of the POST /v1/batch response (docs/api.md, Ingest). */
export type BatchItemResult =
  | {index: number; status: 201 | 200; event: StoredEvent}
  | {index: number; status: 400 | 403 | 409; error: ReturnType<AuditError['toBody']>['error']}

type IngestOutcome = SequenceOutcome

/** The most events and (approximate) bytes of one group commit, unless one request alone is larger. */
const MAX_GROUP_EVENTS = 20_000
const MAX_GROUP_BYTES = 64 * 1024 * 1024

interface Pending extends SequenceRequest {
  /** The events' approximate size as JSON. */
  bytes: number
  resolve(outcomes: IngestOutcome[]): void
  reject(error: unknown): void
}

interface IngestServiceOptions {
  store: EventStore
  /** The in-memory tree to append to; none when the store keeps the tree with the events. */
  tree?: MerkleTree
  /** Called after every durable flush with the new events in index order. */
  onRecorded?: (events: StoredEvent[]) => void
  /** Told of a failure after a durable write (the requests were answered): the server logs it. */
  onError?: (error: unknown) => void
  /** Group bounds (MAX_GROUP_EVENTS, MAX_GROUP_BYTES); tests lower them. */
  maxGroupEvents?: number
  maxGroupBytes?: number
  /**
   * The JWK of a kid, as far as this process knows (AgentKeysService): signatures are verified
   * with it before sequencing, so that the store's lock is held only for the key state's check.
   */
  jwkOf?: (kid: string) => SigningJwk | undefined
  /** Where signatures are verified (default: the process's threads). */
  signaturePool?: SignaturePool
}

export class IngestService {
  private readonly store: EventStore
  private readonly tree: MerkleTree | undefined
  private readonly onRecorded: (events: StoredEvent[]) => void
  private readonly onError: (error: unknown) => void
  private readonly maxGroupEvents: number
  private readonly maxGroupBytes: number
  private queue: Pending[] = []
  private flushing = false
  private readonly signatures: SignatureChecker
  private readonly signaturePool: SignaturePool

  constructor(options: IngestServiceOptions) {
    this.store = options.store
    this.tree = options.tree
    this.onRecorded = options.onRecorded ?? (() => {})
    this.onError = options.onError ?? (() => {})
    this.maxGroupEvents = options.maxGroupEvents ?? MAX_GROUP_EVENTS
    this.maxGroupBytes = options.maxGroupBytes ?? MAX_GROUP_BYTES
    const jwkOf = options.jwkOf ?? (() => undefined)
    this.signatures = new SignatureChecker(jwkOf)
    this.signaturePool = options.signaturePool ?? signaturePool
  }

  /**
   * What each event's signature says on its own (docs/signatures.md), verified on the pool's threads
   * before sequencing; sequencing then checks the key state at the event's index under the lock.
   */
  private async checkSignatures(items: readonly ValidatedEvent[]): Promise<void> {
    const jobs: SignatureJob[] = []
    const signed: ValidatedEvent[] = []
    for (const item of items) {
      const prepared = this.signatures.prepare(item.event)
      if (!isSignatureJob(prepared)) {
        item.signatureCheck = prepared
        continue
      }
      jobs.push(prepared)
      signed.push(item)
    }
    const verdicts = await this.signaturePool.run(jobs)
    signed.forEach((item, i) => (item.signatureCheck = verdicts[i]))
  }

  /** POST /v1/events: validates and records one event; throws validation_error, forbidden (scope) or conflict. */
  async recordOne(body: unknown, scope?: AgentScope): Promise<{status: 201 | 200; event: StoredEvent}> {
    const now = new Date()
    const validated = validateEvent(body, {now, generateId: uuidv7})
    checkWritable(scope, validated.event.agent_id)
    await this.checkSignatures([validated])
    const [outcome] = await this.submit([validated], now)
    if ('error' in outcome!) throw outcome.error
    return outcome!
  }

  /**
   * Records one of the service's own events (an erasure, an agent key: agent ids beginning with
   * `audit-trail:`), which a client may not write; otherwise as recordOne.
   */
  async recordInternal(body: unknown): Promise<StoredEvent> {
    const now = new Date()
    const validated = validateEvent(body, {now, generateId: uuidv7, internal: true})
    const [outcome] = await this.submit([validated], now)
    if ('error' in outcome!) throw outcome.error
    return outcome!.event
  }

  /**
   * POST /v1/batch: one result per element in input order. Invalid elements are reported and
   * skipped; the valid ones are recorded in request order. `status` is 201 when every element
   * succeeded and 207 otherwise.
   */
  async recordBatch(bodies: unknown, options: BatchOptions = {}): Promise<BatchResult> {
    if (!Array.isArray(bodies) || bodies.length === 0) {
      throw new AuditError('validation_error', `the body must be a JSON array of 1 to ${MAX_BATCH_EVENTS} events`, {
        details: [{field: 'body', message: `must be an array of 1 to ${MAX_BATCH_EVENTS} events`}],
      })
    }
    // docs/api.md, POST /v1/batch: up to 1000 events (more: 413), a body of at most 16 MiB (more: 413):
    // more events than a batch may carry is too large a request, like more bytes.
    if (bodies.length > MAX_BATCH_EVENTS) {
      throw new AuditError(
        'payload_too_large',
        `the batch has ${bodies.length} events; a batch carries at most ${MAX_BATCH_EVENTS}`,
      )
    }
    return this.recordElements(bodies, options)
  }

  /**
   * recordBatch without its limit of 1,000 elements, for a caller whose request is larger (an OTLP
   * export of many spans): the valid elements are one append, recorded together or not at all.
   */
  async recordElements(
    bodies: readonly unknown[],
    {maxElementBytes, refused, scope}: BatchOptions = {},
  ): Promise<BatchResult> {
    const now = new Date()
    const results: BatchItemResult[] = new Array(bodies.length)
    const valid: ValidatedEvent[] = []
    const positions: number[] = []
    for (const [index, body] of bodies.entries()) {
      try {
        const refusal = refused?.get(index)
        if (refusal) throw refusal
        if (maxElementBytes !== undefined)
          assertEventSize(Buffer.byteLength(JSON.stringify(body) ?? ''), maxElementBytes)
        const validated = validateEvent(body, {now, generateId: uuidv7})
        checkWritable(scope, validated.event.agent_id)
        valid.push(validated)
        positions.push(index)
      } catch (error) {
        if (!(error instanceof AuditError)) throw error
        results[index] = {index, status: error.code === 'forbidden' ? 403 : 400, error: error.toBody().error}
      }
    }
    await this.checkSignatures(valid)
    const outcomes = await this.submit(valid, now)
    for (const [i, outcome] of outcomes.entries()) {
      const index = positions[i]!
      results[index] =
        'error' in outcome
          ? {index, status: outcome.status, error: outcome.error.toBody().error}
          : {index, status: outcome.status, event: outcome.event}
    }
    const allOk = results.every((r) => r.status === 201 || r.status === 200)
    return {status: allOk ? 201 : 207, results}
  }

  /** Records events in order; resolves with one outcome per item once they are durable. */
  submit(items: ValidatedEvent[], receivedAt: Date = new Date()): Promise<IngestOutcome[]> {
    if (items.length === 0) return Promise.resolve([])
    let bytes = 0
    for (const item of items) bytes += approximateJsonSize(item.event)
    return new Promise((resolve, reject) => {
      this.queue.push({items, recordedAt: receivedAt.toISOString(), bytes, resolve, reject})
      if (!this.flushing) void this.flushLoop()
    })
  }

  /** Resolves once everything submitted so far has been flushed. */
  async drain(): Promise<void> {
    while (this.flushing || this.queue.length > 0) await new Promise((r) => setTimeout(r, 1))
  }

  private async flushLoop(): Promise<void> {
    this.flushing = true
    try {
      while (this.queue.length > 0) {
        const group = this.nextGroup()
        // flush settles its own requests; whatever else throws must not end the loop (nor the
        // process, as an unhandled rejection would) and fails only this group's requests.
        await this.flush(group).catch((error: unknown) => {
          for (const pending of group) pending.reject(error)
        })
      }
    } finally {
      this.flushing = false
    }
  }

  /** Takes requests off the queue, in order, up to the group bounds (at least one request). */
  private nextGroup(): Pending[] {
    let events = 0
    let bytes = 0
    let taken = 0
    for (const pending of this.queue) {
      const fits = events + pending.items.length <= this.maxGroupEvents && bytes + pending.bytes <= this.maxGroupBytes
      if (taken > 0 && !fits) break
      events += pending.items.length
      bytes += pending.bytes
      taken++
    }
    return this.queue.splice(0, taken)
  }

  private async flush(group: Pending[]): Promise<void> {
    let outcomes: IngestOutcome[][]
    let recorded: StoredEvent[]
    try {
      ;({outcomes, recorded} = await this.store.recordEvents(group))
    } catch (error) {
      for (const pending of group) pending.reject(error)
      return
    }
    // Durable from here: every request is answered with its outcome, whatever fails after.
    if (recorded.length > 0 && this.tree) await this.advanceTree(this.tree, recorded).catch(this.onError)
    for (const [i, pending] of group.entries()) pending.resolve(outcomes[i]!)
    if (recorded.length === 0) return
    try {
      this.onRecorded(recorded)
    } catch (error) {
      this.onError(error)
    }
  }

  /**
   * Appends the new events' leaves. Events another writer recorded before them (indexes between
   * the tree's size and theirs) are read from the store first, so the tree stays the log's.
   */
  private async advanceTree(tree: MerkleTree, recorded: StoredEvent[]): Promise<void> {
    const first = recorded[0]!.index
    if (first > tree.size) await catchUpTree(tree, this.store, first)
    appendAt(
      tree,
      first,
      recorded.map((event) => event.hash),
    )
  }
}
