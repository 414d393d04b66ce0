/**
 * The store's side of the search index (search-database.ts): one worker thread per process serves
 * the index of every open store, started when first needed and never holding the process open
 * while idle.
 *
 * Consistency: requests to the thread are answered in the order they were posted. The store feeds
 * each event right after storing it, before acknowledging it, so a search posted afterwards sees
 * it. After (re)starting, the index is asked which events it lacks and is fed those from the store
 * before any search is answered. Should the thread die, the index is opened again from
 * search.sqlite on the next use and caught up the same way: the events table is the record, the
 * index only a view of it.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import type {Worker} from 'node:worker_threads'
import {AuditError} from '../../core/errors.js'
import {startModuleWorker} from '../../threads/start-worker.js'
import type {SearchSource} from './search-text.js'
import {SEARCH_FILE} from './search-database.js'

export type SearchRequest = {id: number; store: number} & (
  | {op: 'open'; dir: string}
  | {op: 'add'; sources: SearchSource[]}
  | {op: 'addJson'; rows: string[]}
  | {op: 'missing'; storeId: string; end: number; epoch: number}
  | {op: 'beginErasure'; from: number; to: number}
  | {op: 'eraseBatch'; before: string[]; after: string[]}
  | {op: 'endErasure'}
  | {op: 'search'; match: string; limit: number; offset: number}
  | {op: 'save'}
  | {op: 'close'}
)

export interface SearchResponse {
  id: number
  result?: unknown
  error?: string
}

type Body = SearchRequest extends infer R ? (R extends SearchRequest ? Omit<R, 'id'> : never) : never

/** The process's search thread. */
class SearchThread {
  #worker: Worker | undefined
  /** Counts the threads started: an index opened on an earlier one must be opened again. */
  generation = 0
  #nextId = 1
  /** When the last thread failed: another is started no sooner than RESTART_AFTER_MS after. */
  #failedAt = -Infinity
  readonly #pending = new Map<number, {resolve: (value: unknown) => void; reject: (error: Error) => void}>()

  /** Starts the thread when none runs; the generation of the one that runs. */
  start(): number {
    if (this.#worker !== undefined) return this.generation
    // A thread that cannot even start (say, its module is missing) must not be retried per event.
    if (performance.now() - this.#failedAt < RESTART_AFTER_MS) throw new Error('the search thread failed a moment ago')
    const worker = startModuleWorker(import.meta.url, 'search-worker')
    // Referenced only while a request waits for its answer (see request).
    worker.unref()
    worker.on('message', (response: SearchResponse) => {
      const waiting = this.#pending.get(response.id)
      if (waiting === undefined) return
      this.#pending.delete(response.id)
      if (this.#pending.size === 0) worker.unref()
      if (response.error === undefined) waiting.resolve(response.result)
      else waiting.reject(new Error(response.error))
    })
    const fail = (error: Error) => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      this.#failedAt = performance.now()
      this.#rejectPending(error)
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the search thread stopped (exit code ${code})`)))
    this.#worker = worker
    return ++this.generation
  }

  /** Terminates the thread as a crash would, except that another may start at once. */
  async stop(): Promise<void> {
    const worker = this.#worker
    if (worker === undefined) return
    this.#worker = undefined
    this.#rejectPending(new Error('the search thread was stopped'))
    await worker.terminate()
  }

  #rejectPending(error: Error): void {
    for (const waiting of this.#pending.values()) waiting.reject(error)
    this.#pending.clear()
  }

  request(body: Body): Promise<unknown> {
    try {
      this.start()
    } catch (error) {
      return Promise.reject(error)
    }
    const worker = this.#worker!
    const id = this.#nextId++
    if (this.#pending.size === 0) worker.ref()
    return new Promise((resolve, reject) => {
      this.#pending.set(id, {resolve, reject})
      worker.postMessage({...body, id})
    })
  }
}

const RESTART_AFTER_MS = 1000
const thread = new SearchThread()
let stores = 0
/** Indexes made and not closed yet, in this process. */
let live = 0

/** What the index reads of its store. */
export interface SearchFeed {
  /** The store's id (a random id kept in its metadata). */
  storeId(): string
  /** The number of events stored (= the next index). */
  count(): number
  /** Up to a batch of the events in [from, to), index ascending, each a SEARCH_SOURCE_JSON text. */
  sourcesJson(from: number, to: number): string[]
  /** How many erasures the store completed or began (its erasure epoch, docs/erasure.md). */
  epoch(): number
}

/** Events waiting to be indexed from which appends wait for the thread (bounds its queue). */
export const MAX_BACKLOG = 100_000

export class SearchIndex {
  readonly #store = ++stores
  /** The thread generation this index was opened on (0: not opened). */
  #opened = 0
  #ready: Promise<void> = Promise.resolve()
  #lastAdd: Promise<unknown> = Promise.resolve()
  #backlog = 0
  #closed = false
  /** Batches fed, and their number when the index was last saved (nothing new: no need to save). */
  #fed = 0
  #savedAt = 0
  /** The requests of the erasure under way (see beginErasure). */
  #erasure: Promise<unknown>[] = []

  constructor(
    private readonly dir: string,
    private readonly feed: SearchFeed,
  ) {
    live++
  }

  /** Events fed and not indexed yet. */
  get backlog(): number {
    return this.#backlog
  }

  /** Opens the index (and starts the thread) now rather than at the first event or search. */
  async prepare(): Promise<void> {
    this.#open()
    await this.#ready
  }

  /** Feeds events just stored (their index must be below feed.count()). */
  add(sources: SearchSource[]): void {
    if (this.#closed || sources.length === 0) return
    try {
      this.#open()
    } catch {
      // No thread for now: the next opening feeds these from the store.
      return
    }
    this.#fed++
    this.#backlog += sources.length
    const done = () => {
      this.#backlog -= sources.length
    }
    // A lost thread loses these too; the next opening feeds them again from the store.
    this.#lastAdd = thread.request({op: 'add', store: this.#store, sources}).then(done, done)
  }

  /** Resolves once the events fed so far are indexed. */
  indexed(): Promise<void> {
    return this.#lastAdd.then(() => undefined)
  }

  /** The number of events matching an FTS4 MATCH expression and one page of their indexes. */
  async search(match: string, limit: number, offset: number): Promise<{total: number; indexes: number[]}> {
    for (let attempt = 1; ; attempt++) {
      let generation = thread.generation
      try {
        generation = this.#open()
        await this.#ready
        return (await thread.request({op: 'search', store: this.#store, match, limit, offset})) as {
          total: number
          indexes: number[]
        }
      } catch (error) {
        // The thread was lost under this request: open the index again, once.
        if (attempt === 1 && thread.generation !== generation) continue
        throw new AuditError('storage_unavailable', 'the search index is unavailable', {cause: error})
      }
    }
  }

  /**
   * An erasure of the store's events begins, taking its epoch from `from` to `to`; the store then
   * hands over each batch of events it erases (the text the index was fed, and the erased text) and
   * ends with endErasure. Posted in order with the events fed, so a search posted after endErasure
   * never finds an erased value (search-database.ts).
   */
  beginErasure(from: number, to: number): void {
    this.#erasure = []
    try {
      this.#open()
    } catch {
      // No thread: endErasure removes the file, and the next opening empties the index (epochs differ).
      this.#erasure.push(Promise.reject(new Error('no search thread')))
      return
    }
    this.#fed++
    this.#erasure.push(thread.request({op: 'beginErasure', store: this.#store, from, to}))
  }

  /** One batch of erased events: SEARCH_SOURCE_JSON rows before and after the erasure, in the same order. */
  eraseBatch(before: string[], after: string[]): void {
    if (before.length === 0 || this.#closed) return
    this.#erasure.push(thread.request({op: 'eraseBatch', store: this.#store, before, after}))
  }

  /**
   * Ends the erasure and saves search.sqlite without the erased text. Should any step have failed,
   * the file is removed instead (the index is a cache: the next opening builds it again from the
   * events) and the thread stopped, so that no copy of the old text answers a search.
   */
  async endErasure(): Promise<void> {
    if (this.#closed) return
    this.#erasure.push(thread.request({op: 'endErasure', store: this.#store}))
    const outcomes = await Promise.allSettled(this.#erasure)
    this.#erasure = []
    let saved = outcomes.every((outcome) => outcome.status === 'fulfilled')
    if (saved) {
      this.#fed++
      saved = await thread.request({op: 'save', store: this.#store}).then(
        () => true,
        () => false,
      )
      this.#savedAt = this.#fed
    }
    if (!saved) {
      await thread.stop()
      for (const file of [SEARCH_FILE, `${SEARCH_FILE}.tmp`]) fs.rmSync(path.join(this.dir, file), {force: true})
    }
  }

  /** Saves search.sqlite (in the thread; the index is a cache, so a failure only costs a rebuild). */
  async save(): Promise<void> {
    if (this.#opened === 0 || this.#closed || this.#savedAt === this.#fed) return
    const fed = this.#fed
    this.#savedAt = fed
    await thread.request({op: 'save', store: this.#store}).catch(() => {
      if (this.#savedAt === fed) this.#savedAt = -1
    })
  }

  /**
   * Saves and closes the index; stops feeding it. With `release`, and no other index open, the
   * thread is ended too: WebAssembly memory only grows, so only ending the thread gives back
   * what a large index took (the next index starts another).
   */
  async close(release = false): Promise<void> {
    if (this.#closed) return
    await this.save()
    this.#closed = true
    if (this.#opened !== 0) await thread.request({op: 'close', store: this.#store}).catch(() => undefined)
    if (--live === 0 && release) await thread.stop()
  }

  /** Opens the index on the current thread unless it is open there; returns the generation. */
  #open(): number {
    const generation = thread.start()
    if (this.#opened === generation) return generation
    this.#opened = generation
    void thread.request({op: 'open', store: this.#store, dir: this.dir}).catch(() => undefined)
    const missing = thread.request({
      op: 'missing',
      store: this.#store,
      storeId: this.feed.storeId(),
      end: this.feed.count(),
      epoch: this.feed.epoch(),
    })
    this.#ready = this.#catchUp(missing as Promise<[number, number][]>)
    this.#ready.catch(() => undefined)
    return generation
  }

  /** Feeds the events the index lacks, a batch at a time (one batch in the thread at a time). */
  async #catchUp(missing: Promise<[number, number][]>): Promise<void> {
    for (const [start, end] of await missing) {
      let from = start
      while (from < end && !this.#closed) {
        const rows = this.feed.sourcesJson(from, end)
        if (rows.length === 0) break
        from = Number.parseInt(rows[rows.length - 1]!.slice(1), 10) + 1
        this.#fed++
        await thread.request({op: 'addJson', store: this.#store, rows})
      }
    }
  }
}

/** Ends the search thread as a crash would (for fault tests); the next use starts another. */
export async function stopSearchThread(): Promise<void> {
  await thread.stop()
}
