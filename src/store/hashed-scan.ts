/**
 * Stored events' chain fields with their hashes recomputed from stored content (what every chain
 * check needs). For scans large enough to pay for a thread, decoding the rows and hashing them
 * (JSON parse, RFC 8785 serialisation and SHA-256, about two thirds of the work) run on a worker
 * thread while this thread reads the next batch out of SQLite. Small scans do it all on this
 * thread. Either way each hash is exactly recomputeHash(event) of the event toEvent reads, so
 * verdicts do not depend on where it was computed.
 */
import type {Worker} from 'node:worker_threads'
import {recomputeHash, type ChainLink} from '../core/chain/index.js'
import type {SigningJwk} from '../core/jws/jwk.js'
import {SignatureChecker, type SignatureContent} from '../core/signature/index.js'
import {hashingThreads} from '../threads/hashing-threads.js'
import {startModuleWorker} from '../threads/start-worker.js'
import {toEvent} from './event-row.js'
import {scanRowEvent} from './sqljs/scan-row.js'
import type {StoredEvent} from '../core/types.js'

/**
 * A stored event's chain fields and index; for an event with erased members, the event itself, so
 * that each erasure it names can be checked (core/erasure/reference.ts).
 */
export type IndexedLink = ChainLink & {index: number; erased?: StoredEvent}

export interface HashedBatch {
  /** The events' chain fields. */
  links: IndexedLink[]
  /** hashes[i] = recomputeHash(event i): the hash of its stored content, or why it has none. */
  hashes: string[]
  /** signatures[i]: what event i's signature says on its own (SignatureChecker), null when it has none. */
  signatures: Array<SignatureContent | null>
}

/** The keys a scan checks signatures with, by kid (KeyTimeline.jwks()); none: signatures are not verified. */
export type SignatureKeys = ReadonlyMap<string, SigningJwk>

const checkerOf = (keys: SignatureKeys | undefined) => new SignatureChecker((kid) => keys?.get(kid))

/**
 * How a scan's rows are written: EVENT_JSON texts (toEvent), or a data directory's SCAN_JSON
 * (sqljs/scan-row.ts), which leaves hex and times to the hashing thread.
 */
export type RowForm = 'event-json' | 'sqlite-scan'

const DECODE: Readonly<Record<RowForm, (text: string) => StoredEvent>> = {
  'event-json': toEvent,
  'sqlite-scan': scanRowEvent,
}

/** From this many events a scan hashes on a thread (starting one costs 50-400 ms). */
export const THREAD_FROM_EVENTS = 50_000

/** What a scan asks of its hashing thread (replaced in tests). */
export interface HashingThread {
  hash(rows: readonly string[]): Promise<HashedBatch>
  stop(): Promise<void>
}

/** The hashing thread of one scan. */
export class HashThread implements HashingThread {
  readonly #worker: Worker
  #nextId = 1
  readonly #waiting = new Map<number, {resolve: (hashed: HashedBatch) => void; reject: (error: Error) => void}>()
  #failure: Error | undefined

  constructor(keys?: SignatureKeys, form: RowForm = 'event-json') {
    this.#worker = startModuleWorker(import.meta.url, 'event-hash-worker', {keys, form})
    this.#worker.on('message', ({id, hashed, error}: {id: number; hashed?: HashedBatch; error?: string}) => {
      const waiting = this.#waiting.get(id)
      this.#waiting.delete(id)
      if (hashed !== undefined) waiting?.resolve(hashed)
      else waiting?.reject(new Error(error))
    })
    const fail = (error: Error) => {
      this.#failure ??= error
      for (const waiting of this.#waiting.values()) waiting.reject(error)
      this.#waiting.clear()
    }
    this.#worker.on('error', fail)
    this.#worker.on('exit', (code) => fail(new Error(`the hashing thread stopped (exit code ${code})`)))
  }

  hash(rows: readonly string[]): Promise<HashedBatch> {
    if (this.#failure) return Promise.reject(this.#failure)
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, {resolve, reject})
      this.#worker.postMessage({id, rows})
    })
  }

  async stop(): Promise<void> {
    await this.#worker.terminate()
  }
}

/**
 * Decodes rows (written in `form`), recomputes their hashes and checks their signatures with
 * `checker` (on whichever thread calls it); the default checker knows no key, so it only reads
 * which kid signed.
 */
export function hashRows(
  rows: readonly string[],
  checker: SignatureChecker = checkerOf(undefined),
  form: RowForm = 'event-json',
): HashedBatch {
  const decode = DECODE[form]
  const links: IndexedLink[] = []
  const hashes: string[] = []
  const signatures: Array<SignatureContent | null> = []
  for (const row of rows) {
    const event = decode(row)
    const link: IndexedLink = {
      index: event.index,
      id: event.id,
      agent_id: event.agent_id,
      sequence: event.sequence,
      prev_hash: event.prev_hash,
      hash: event.hash,
    }
    if (event.erased !== undefined) link.erased = event
    links.push(link)
    hashes.push(recomputeHash(event))
    signatures.push(checker.check(event))
  }
  return {links, hashes, signatures}
}

/**
 * Rows a hashing thread is handed at once. Smaller than a scan's batch, so that what a thread still
 * holds when reading ends (and this thread then waits for) is short.
 */
export const HASH_CHUNK = 1_000

/**
 * Chunks a hashing thread is handed at most at once: the one it hashes and those behind it, enough
 * to keep it busy while the scanning thread reads a batch and hashes a chunk of its own.
 */
export const QUEUED_PER_THREAD = 8

/** How a large scan spreads its hashing. */
export interface HashingPlan {
  /** Hashing threads, each holding at most QUEUED_PER_THREAD batches. */
  threads: number
  /** From this many expected events the scan hashes on threads (default THREAD_FROM_EVENTS). */
  threadFrom?: number
  /**
   * Whether the scanning thread hashes a batch itself when every hashing thread is full: right
   * when reading is work on this thread too (sql.js), wrong when the rows come from a database
   * server, which must not wait for this thread to take them off the socket.
   */
  callerHashes: boolean
  /** How the rows are written (default: EVENT_JSON texts). */
  form?: RowForm
}

/** A scan's batches of rows in chunks of HASH_CHUNK at most. */
async function* chunks(rows: AsyncIterable<string[]>): AsyncIterable<readonly string[]> {
  for await (const batch of rows) {
    if (batch.length <= HASH_CHUNK) yield batch
    else for (let from = 0; from < batch.length; from += HASH_CHUNK) yield batch.slice(from, from + HASH_CHUNK)
  }
}

/**
 * Batches of rows (texts written in plan.form, index order) as HashedBatches, in the same order
 * (of at most HASH_CHUNK rows each when threads hash them). `expected`: about how many events the
 * scan will read (decides whether threads are worth it). Should a thread
 * fail, its batches are hashed here instead: the same function, so the same verdicts. Signatures
 * are checked with `keys` wherever the hashing runs.
 */
export async function* hashedBatches(
  rows: AsyncIterable<string[]>,
  expected: number,
  startThread: (keys?: SignatureKeys, form?: RowForm) => HashingThread = (keys, form) => new HashThread(keys, form),
  plan: HashingPlan = {threads: hashingThreads(), callerHashes: true},
  keys?: SignatureKeys,
): AsyncIterable<HashedBatch> {
  const checker = checkerOf(keys)
  const hash = (batch: readonly string[]) => hashRows(batch, checker, plan.form)
  if (expected < (plan.threadFrom ?? THREAD_FROM_EVENTS)) {
    for await (const batch of rows) yield hash(batch)
    return
  }
  const threads = Array.from({length: Math.max(1, plan.threads)}, () => startThread(keys, plan.form))
  // Chunks handed to each thread and not yet answered: a thread holds the next chunks while it
  // hashes one, so it never waits for this thread to read a batch and hash a chunk of its own.
  const queued = threads.map(() => 0)
  const leastQueued = () => queued.indexOf(Math.min(...queued))
  type Slot = {batch?: HashedBatch; hashing?: Promise<HashedBatch>; thread?: number; rows?: readonly string[]}
  const pending: Slot[] = []
  // In order: what is ready, and the oldest anyway once many wait (bounds the memory). The margin
  // lets this thread hash on while a thread starts, rather than wait for its first answer.
  const waitingAtMost = QUEUED_PER_THREAD * threads.length + 16
  try {
    for await (const batch of chunks(rows)) {
      while (!plan.callerHashes && queued[leastQueued()]! >= QUEUED_PER_THREAD) {
        const slot = pending.shift()!
        yield slot.batch ?? (await slot.hashing!)
      }
      const t = leastQueued()
      if (queued[t]! >= QUEUED_PER_THREAD) {
        pending.push({batch: hash(batch)})
      } else {
        queued[t]!++
        const slot: Slot = {thread: t, rows: batch}
        slot.hashing = threads[t]!.hash(batch)
          // Not hashed again if this thread took it over (see below) and the hashing thread then stops.
          .catch(() => slot.batch ?? hash(batch))
          .then((hashed) => {
            slot.batch = hashed
            queued[t]!--
            return hashed
          })
        // A failure is taken when the slot's turn comes, not as an unhandled rejection before.
        slot.hashing.catch(() => undefined)
        pending.push(slot)
      }
      while (pending.length > 0 && (pending[0]!.batch !== undefined || pending.length > waitingAtMost)) {
        const slot = pending.shift()!
        yield slot.batch ?? (await slot.hashing!)
      }
    }
    if (plan.callerHashes) {
      // Reading is done: rather than wait, this thread hashes the chunks still queued behind
      // another on their thread, the last first, while the threads go on from their first.
      for (let i = pending.length - 1; i >= 0; i--) {
        const slot = pending[i]!
        const waitsBehind = pending.slice(0, i).some((s) => s.thread === slot.thread && s.batch === undefined)
        if (slot.batch !== undefined || slot.rows === undefined || !waitsBehind) continue
        slot.batch = hash(slot.rows)
        // Takes in the answers that came meanwhile, so that a chunk a thread has finished is not hashed twice.
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
    }
    for (const slot of pending) yield slot.batch ?? (await slot.hashing!)
  } finally {
    await Promise.all(threads.map((thread) => thread.stop()))
  }
}
