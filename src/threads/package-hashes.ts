/**
 * `verify --package` on every core (docs/design.md, Verification on every core). The package's
 * events arrive in runs of text as the calling thread parses the file; two runs of every three
 * (more with more cores) go to worker threads, which parse them once more and recompute each
 * event's hash (RFC 8785 and SHA-256 with the commitments) while the calling thread reads on and
 * then checks the events in order, hashing the remaining runs itself. A precomputed hash is
 * recomputeHash of the same text parsed by the same JSON.parse, so the verdicts and the first
 * failure named are those of one thread; a run a thread could not hash comes back as nulls, which
 * the verification computes itself.
 */
import type {Worker} from 'node:worker_threads'
import {recomputeHash} from '../core/chain/index.js'
import type {StoredEvent} from '../core/types.js'
import {hashingThreads} from './hashing-threads.js'
import {startModuleWorker} from './start-worker.js'

/** From this many events a package's hashing goes to threads (starting one costs 50-400 ms). */
export const PACKAGE_THREAD_FROM_EVENTS = 20_000

/**
 * recomputeHash of each element of a run of a package's `events` array (the text between its
 * brackets); null for an element that is not an object, which the verification refuses itself.
 */
export function runHashes(text: string): Array<string | null> {
  const events = JSON.parse(`[${text}]`) as unknown[]
  return events.map((event) =>
    event !== null && typeof event === 'object' && !Array.isArray(event) ? recomputeHash(event as StoredEvent) : null,
  )
}

type Hashes = Array<string | null>

interface Run {
  from: number
  /** Given once the thread answered (nulls where it could not hash); none: the caller hashes. */
  hashes?: Hashes
  pending?: Promise<Hashes>
}

interface HashingWorker {
  worker: Worker
  waiting: Map<number, (hashes: Hashes | undefined) => void>
  failed: boolean
}

export class PackageHashing {
  readonly #workers: HashingWorker[] = []
  readonly #runs: Run[] = []
  #nextId = 1
  #handedOver = 0
  #cursor = 0

  constructor(
    private readonly threads = hashingThreads(),
    private readonly threadFrom = PACKAGE_THREAD_FROM_EVENTS,
  ) {}

  /** The next run of the array: `count` elements parsed by the caller from `text`, `before` before it. */
  add(text: string, count: number, before: number): void {
    const run: Run = {from: before}
    this.#runs.push(run)
    if (this.threads < 1 || before + count < this.threadFrom) return
    // Of each 2n + 1 runs, n threads take two each and the caller, which also parses and checks, one.
    const turn = this.#handedOver++ % (2 * this.threads + 1)
    if (turn === 2 * this.threads) return
    const thread = this.#workerAt(turn % this.threads)
    run.pending = this.#post(thread, text).then((hashes) => (run.hashes = hashes ?? new Array<null>(count).fill(null)))
  }

  /**
   * The precomputed hash of the event at `position` of the array, null where the caller computes
   * it; a promise while its thread is still at work. Positions are asked in ascending order.
   */
  hashAt(position: number): string | null | Promise<string | null> {
    while (this.#cursor + 1 < this.#runs.length && this.#runs[this.#cursor + 1]!.from <= position) this.#cursor++
    const run = this.#runs[this.#cursor]
    if (run === undefined || run.from > position) return null
    if (run.hashes !== undefined) return run.hashes[position - run.from] ?? null
    if (run.pending !== undefined) return run.pending.then((hashes) => hashes[position - run.from] ?? null)
    return null
  }

  async stop(): Promise<void> {
    await Promise.all(this.#workers.map(({worker}) => worker.terminate()))
  }

  #post(thread: HashingWorker, text: string): Promise<Hashes | undefined> {
    return new Promise((resolve) => {
      if (thread.failed) return resolve(undefined)
      const id = this.#nextId++
      thread.waiting.set(id, resolve)
      thread.worker.postMessage({id, text})
    })
  }

  #workerAt(i: number): HashingWorker {
    const existing = this.#workers[i]
    if (existing !== undefined) return existing
    const worker = startModuleWorker(import.meta.url, 'package-hash-worker')
    const thread: HashingWorker = {worker, waiting: new Map(), failed: false}
    worker.on('message', ({id, hashes}: {id: number; hashes?: Hashes}) => {
      thread.waiting.get(id)?.(hashes)
      thread.waiting.delete(id)
    })
    const fail = () => {
      thread.failed = true
      for (const resolve of thread.waiting.values()) resolve(undefined)
      thread.waiting.clear()
    }
    worker.on('error', fail)
    worker.on('exit', fail)
    this.#workers[i] = thread
    return thread
  }
}

/** `work` with a PackageHashing, whose threads are stopped when it ends, however it ends. */
export async function withPackageHashing<T>(work: (hashes: PackageHashing) => Promise<T>): Promise<T> {
  const hashes = new PackageHashing()
  try {
    return await work(hashes)
  } finally {
    await hashes.stop()
  }
}
