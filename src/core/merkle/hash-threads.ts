/**
 * Worker-thread plumbing for the bulk build (levels.ts has the algorithm): starts hash workers on
 * a shared BlockJob, lets the calling thread claim blocks too, and settles once every block is
 * hashed or as soon as a worker fails. Workers are always terminated before it settles.
 */
import {availableParallelism} from 'node:os'
import type {Worker} from 'node:worker_threads'
import {startModuleWorker} from '../worker-entry.js'
import {hashClaimedBlocks, isFinished, type BlockJob} from './levels.js'

/**
 * One hashing thread per core the process may use, at most 8: each worker costs an isolate and
 * 50 ms or more to start, and past a few threads a million leaves take only a few blocks each.
 */
export function defaultThreads(): number {
  return Math.min(availableParallelism(), 8)
}

/**
 * Hashes every block of `job` on `workerCount` worker threads plus, unless `mainThreadHelps` is
 * false, the calling thread (synchronously, while the workers start: a worker takes 50 ms to
 * start from compiled JS and about 400 ms under tsx, so the caller claims the first blocks).
 * Rejects with the first worker error, or when a worker exits before the job is done.
 * Preconditions: job was created with `shared`; workerCount >= 1.
 */
export async function hashBlocksOnThreads(job: BlockJob, workerCount: number, mainThreadHelps = true): Promise<void> {
  const workers = Array.from({length: workerCount}, () => startHashWorker(job))
  try {
    const settled = new Promise<void>((resolve, reject) => {
      for (const worker of workers) {
        let reported = false
        // A worker reports after its last block: the job may be done now, by it or by others.
        worker.on('message', () => {
          reported = true
          if (isFinished(job)) resolve()
        })
        worker.on('error', reject)
        worker.on('exit', (code) => {
          if (!reported && !isFinished(job)) reject(new Error(`hash worker exited with code ${code} before reporting`))
        })
      }
    })
    // Settling after we stopped listening (a worker failing at start-up while this thread did
    // every block) must not surface as an unhandled rejection.
    settled.catch(() => undefined)
    if (mainThreadHelps) hashClaimedBlocks(job)
    if (!isFinished(job)) await settled
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()))
  }
}

function startHashWorker(job: BlockJob): Worker {
  const {leafData, size, blockSize, levels, progress} = job
  return startModuleWorker(import.meta.url, 'hash-worker', {leafData, size, blockSize, levels, progress})
}
