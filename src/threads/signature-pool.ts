/**
 * Agents' signatures verified on worker threads at ingest (docs/signatures.md): an Ed25519
 * verification costs about 50 µs, as much as the rest of an event's ingest, and it does not depend
 * on the log (a kid is its key's thumbprint), so it runs beside the ingest thread before the
 * event is sequenced. A verdict is the same on any thread: the job carries its key, and a thread
 * that fails has its jobs verified on the calling thread instead.
 *
 * One pool per process, shared by every service in it; its threads keep the process alive only
 * while they hold jobs.
 */
import {availableParallelism} from 'node:os'
import type {Worker} from 'node:worker_threads'
import {SignatureChecker, type SignatureContent, type SignatureJob} from '../core/signature/index.js'
import {startModuleWorker} from './start-worker.js'

/** The cores besides the ingest thread's, at most 4 (one verifies about 20,000 Ed25519 signatures a second). */
function defaultSignatureThreads(): number {
  return Math.max(0, Math.min(availableParallelism() - 1, 4))
}

/** Fewer jobs than this go to one thread; more are shared out in chunks of at least this many. */
const CHUNK = 64

interface PoolThread {
  worker: Worker
  waiting: Map<number, {resolve(verdicts: SignatureContent[]): void; reject(error: Error): void}>
}

export class SignaturePool {
  readonly #threads: PoolThread[] = []
  readonly #inline = new SignatureChecker(() => undefined)
  #next = 0
  #nextId = 1

  constructor(private readonly size: number = defaultSignatureThreads()) {}

  /**
   * The verdict of each job, in order. A large set is shared between the threads and the calling
   * thread, which verifies the last share while the threads verify theirs (a client waiting for its
   * batch gains from it; the other requests of a busy server wait for one share at most).
   */
  async run(jobs: readonly SignatureJob[]): Promise<SignatureContent[]> {
    if (jobs.length === 0) return []
    if (this.size === 0) return jobs.map((job) => this.#inline.run(job))
    const shares = Math.max(1, Math.min(this.size + 1, Math.floor(jobs.length / CHUNK)))
    const per = Math.ceil(jobs.length / shares)
    const threads = Math.max(1, shares - 1)
    const posted = Array.from({length: threads}, (_, i) => this.#runOnThread(jobs.slice(i * per, (i + 1) * per)))
    const own = jobs.slice(threads * per).map((job) => this.#inline.run(job))
    return [...(await Promise.all(posted)).flat(), ...own]
  }

  async #runOnThread(jobs: SignatureJob[]): Promise<SignatureContent[]> {
    try {
      return await this.#post(this.#thread(), jobs)
    } catch {
      return jobs.map((job) => this.#inline.run(job))
    }
  }

  /** The next thread in turn, started when there are fewer than `size`. */
  #thread(): PoolThread {
    if (this.#threads.length < this.size) {
      const thread: PoolThread = {worker: startModuleWorker(import.meta.url, 'signature-worker'), waiting: new Map()}
      thread.worker.unref()
      thread.worker.on('message', ({id, verdicts}: {id: number; verdicts: SignatureContent[]}) => {
        thread.waiting.get(id)?.resolve(verdicts)
        thread.waiting.delete(id)
        if (thread.waiting.size === 0) thread.worker.unref()
      })
      const fail = (error: Error) => {
        const at = this.#threads.indexOf(thread)
        if (at >= 0) this.#threads.splice(at, 1)
        for (const waiting of thread.waiting.values()) waiting.reject(error)
        thread.waiting.clear()
      }
      thread.worker.on('error', fail)
      thread.worker.on('exit', (code) => fail(new Error(`the signature thread stopped (exit code ${code})`)))
      this.#threads.push(thread)
      return thread
    }
    return this.#threads[this.#next++ % this.#threads.length]!
  }

  #post(thread: PoolThread, jobs: SignatureJob[]): Promise<SignatureContent[]> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      thread.waiting.set(id, {resolve, reject})
      thread.worker.ref()
      thread.worker.postMessage({id, jobs})
    })
  }
}

/** The process's pool. */
export const signaturePool = new SignaturePool()
