/**
 * A chain check of the log split by index range over the cores (docs/postgres.md, Chain
 * verification): each thread reads ranges of RANGE indexes over a connection of its own (so the
 * server builds their rows on as many backends), decodes and hashes them; this thread only puts the
 * ranges back in index order for the verifier. The hashes are hashRows' as in every other scan, so
 * the verdicts are those of a scan on one thread. A range holds every row of its indexes, and a scan
 * from the start has no lower bound: a row under a negative index (only after tampering) comes first,
 * as in the store's other scans.
 */
import os from 'node:os'
import type {Worker} from 'node:worker_threads'
import {AuditError} from '../../core/errors.js'
import {startModuleWorker} from '../../threads/start-worker.js'
import type {HashedBatch} from '../hashed-scan.js'
import type {RangeAnswer, RangeRequest} from './range-scan-worker.js'

/** Indexes a thread reads in one query. */
export const RANGE = 5000
/** Ranges each thread may have read ahead of the verifier: bounds the memory, keeps the server busy. */
const AHEAD = 2

/** The threads of a scan: one per core, at least two (this thread mostly waits). */
export function rangeThreads(): number {
  return Math.max(2, os.availableParallelism())
}

/** The ranges of [from, to) (from undefined: from 0 and below), RANGE indexes each. */
export function rangesOf(from: number | undefined, to: number): RangeRequest[] {
  const ranges: RangeRequest[] = []
  for (let start = from ?? 0; start < to; start += RANGE)
    ranges.push({from: from === undefined && start === 0 ? null : start, to: Math.min(to, start + RANGE)})
  return ranges
}

/** One thread of a scan: its ranges are requested in index order and answered in that order. */
class RangeReader {
  readonly #worker: Worker
  readonly #waiting: Array<(answer: RangeAnswer) => void> = []
  #failure: string | undefined

  constructor(databaseUrl: string) {
    this.#worker = startModuleWorker(import.meta.url, 'range-scan-worker', {databaseUrl})
    this.#worker.on('message', (answer: RangeAnswer) => this.#waiting.shift()?.(answer))
    const fail = (message: string) => {
      this.#failure ??= message
      for (const resolve of this.#waiting.splice(0)) resolve({range: {from: null, to: 0}, error: message})
    }
    this.#worker.on('error', (error) => fail(error.message))
    this.#worker.on('exit', (code) => fail(`the scanning thread stopped (exit code ${code})`))
  }

  read(range: RangeRequest): Promise<RangeAnswer> {
    if (this.#failure !== undefined) return Promise.resolve({range, error: this.#failure})
    return new Promise((resolve) => {
      this.#waiting.push(resolve)
      this.#worker.postMessage(range)
    })
  }

  stop(): Promise<number> {
    return this.#worker.terminate()
  }
}

/**
 * The events of indexes from `from` (undefined: from the start, negative ones included) below `to`,
 * hashed, in index order, read by `threads` threads over connections of their own to `databaseUrl`.
 */
export async function* rangeHashedBatches(
  databaseUrl: string,
  from: number | undefined,
  to: number,
  threads = rangeThreads(),
): AsyncIterable<HashedBatch> {
  const ranges = rangesOf(from, to)
  const readers = Array.from(
    {length: Math.min(threads, Math.max(1, ranges.length))},
    () => new RangeReader(databaseUrl),
  )
  // Range i is read by reader i mod readers; each reader is at most AHEAD ranges ahead.
  const reading = new Map<number, Promise<RangeAnswer>>()
  const request = (i: number) => {
    if (i < ranges.length) reading.set(i, readers[i % readers.length]!.read(ranges[i]!))
  }
  try {
    for (let i = 0; i < readers.length * AHEAD; i++) request(i)
    for (let i = 0; i < ranges.length; i++) {
      const answer = await reading.get(i)!
      reading.delete(i)
      request(i + readers.length * AHEAD)
      if ('error' in answer) {
        const {from: start, to: end} = ranges[i]!
        throw new AuditError('storage_unavailable', `reading events ${start ?? 0}..${end - 1}: ${answer.error}`)
      }
      if (answer.hashed.links.length > 0) yield answer.hashed
    }
  } finally {
    await Promise.all(readers.map((reader) => reader.stop()))
  }
}
