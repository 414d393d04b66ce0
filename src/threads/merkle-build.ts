/**
 * A whole MerkleTree, or only its root, built from many leaves at once (service start-up, audits)
 * on several threads. The result is byte-identical to appending the leaves one by one: the same
 * RFC 9162 2.1.1 nodes, hashed in aligned blocks (core/merkle/levels.ts) instead of in append
 * order. Worker-thread plumbing lives here, above core, which stays pure.
 */
import {availableParallelism} from 'node:os'
import type {Worker} from 'node:worker_threads'
import {HASH_SIZE, MerkleError, MerkleTree} from '../core/merkle/index.js'
import {createBlockJob, hashClaimedBlocks, isFinished, stitchBlocks, type BlockJob} from '../core/merkle/levels.js'
import {startModuleWorker} from './start-worker.js'

/**
 * One hashing thread per core the process may use, at most 8: each worker costs an isolate and
 * a start-up, and past a few threads a million leaves take only a few blocks each.
 */
function defaultThreads(): number {
  return Math.min(availableParallelism(), 8)
}

/**
 * Hashes every block of `job` on `workerCount` worker threads plus, unless `mainThreadHelps` is
 * false, the calling thread (synchronously, while the workers start, so the caller claims the
 * first blocks).
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
  return startModuleWorker(import.meta.url, 'merkle-hash-worker', {leafData, size, blockSize, levels, progress})
}

interface BulkOptions {
  /** Hashing threads, counting the calling one; 1 hashes in this thread. Default: one per core, at most 8. */
  threads?: number
}

// 2^14 leaves per block: small enough that the threads finish within a block of each other,
// large enough that claiming blocks costs nothing.
const BLOCK_SIZE = 2 ** 14
// Below this a worker costs more to start than it could save, so hash in-thread.
const PARALLEL_THRESHOLD = 2 ** 16

/**
 * The tree over leaves d_0..d_{n-1} given as n * 32 bytes back to back, as if each had been
 * appended in order; append() keeps working on it. Preconditions: leafData.length is a multiple
 * of 32 and at most 2^27 leaves; threads is an integer >= 1; otherwise `invalid_argument`.
 */
export async function buildTree(leafData: Uint8Array, options: BulkOptions = {}): Promise<MerkleTree> {
  const threads = options.threads ?? defaultThreads()
  if (!Number.isSafeInteger(threads) || threads < 1) {
    throw new MerkleError('invalid_argument', `threads must be an integer >= 1, got ${threads}`)
  }
  const leafCount = leafData instanceof Uint8Array ? leafData.length / HASH_SIZE : 0
  const workers = leafCount < PARALLEL_THRESHOLD ? 0 : Math.min(threads - 1, Math.ceil(leafCount / BLOCK_SIZE) - 1)
  const job = createBlockJob(leafData, BLOCK_SIZE, workers > 0)
  if (workers > 0) await hashBlocksOnThreads(job, workers)
  else hashClaimedBlocks(job)
  stitchBlocks(job)
  return MerkleTree.fromLevels(job.size, job.levels)
}

/**
 * MTH(D[n]) (RFC 9162 2.1.1) of leaves given as for buildTree, on several threads: equal to
 * computeRoot() over the same leaves. Unlike computeRoot it holds every node (about 64 bytes
 * per leaf) while it runs. Preconditions as for buildTree.
 */
export async function computeRootParallel(leafData: Uint8Array, options: BulkOptions = {}): Promise<Uint8Array> {
  return (await buildTree(leafData, options)).root()
}
