/**
 * A whole MerkleTree, or only its root, built from many leaves at once (service start-up, audits)
 * on several threads. The result is byte-identical to appending the leaves one by one: the same
 * RFC 9162 2.1.1 nodes, hashed in aligned blocks (levels.ts) instead of in append order.
 */
import {MerkleError} from './errors.js'
import {defaultThreads, hashBlocksOnThreads} from './hash-threads.js'
import {HASH_SIZE} from './hasher.js'
import {createBlockJob, hashClaimedBlocks, stitchBlocks} from './levels.js'
import {MerkleTree} from './tree.js'

export interface BulkOptions {
  /** Hashing threads, counting the calling one; 1 hashes in this thread. Default: one per core, at most 8. */
  threads?: number
}

// 2^14 leaves (about 30 ms of hashing) per block: small enough that the threads finish within
// a block of each other, large enough that claiming blocks costs nothing.
const BLOCK_SIZE = 2 ** 14
// Below this a worker costs more to start (50-400 ms) than it could save, so hash in-thread.
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
 * The leaf data buildTree takes, from event hashes as hex (the stored `hash` column), placed in
 * shared memory so that worker threads read it without a copy. Precondition: each is exactly 64
 * hex digits (either case), as for MerkleTree.appendHex; otherwise `invalid_argument`.
 */
export function leafDataFromHex(hashesHex: readonly string[]): Uint8Array {
  const leafData = Buffer.from(new SharedArrayBuffer(hashesHex.length * HASH_SIZE))
  hashesHex.forEach((hashHex, i) => {
    if (typeof hashHex !== 'string' || hashHex.length !== 2 * HASH_SIZE) throw badHex(i)
  })
  // Decoding a few thousand joined hashes per call measured about 1.5x faster than one write()
  // per hash (200-250 ms against 350-400 ms for a million). write() stops at the first
  // non-hex digit, so a short count means one of this chunk's hashes has one.
  for (let start = 0; start < hashesHex.length; start += HEX_CHUNK) {
    const chunk = hashesHex.slice(start, start + HEX_CHUNK)
    if (leafData.write(chunk.join(''), start * HASH_SIZE, 'hex') !== chunk.length * HASH_SIZE) {
      throw badHex(start + chunk.findIndex((hashHex) => !/^[0-9a-fA-F]*$/.test(hashHex)))
    }
  }
  return leafData
}

const HEX_CHUNK = 4096

/**
 * leafDataFromHex for hashes that come as joined strings, each of `count` hashes (a store reads
 * them that way: decoding a few dozen long strings instead of a million short ones). Gives
 * undefined when a chunk is not exactly `count` 64-digit hex hashes; leafDataFromHex over the
 * single hashes then names the bad one. `capacity` is an upper bound of the total count.
 */
export async function leafDataFromHexChunks(chunks: AsyncIterable<{count: number; hex: string}>, capacity: number): Promise<Uint8Array | undefined> {
  const leafData = Buffer.from(new SharedArrayBuffer(capacity * HASH_SIZE))
  let offset = 0
  for await (const {count, hex} of chunks) {
    const bytes = count * HASH_SIZE
    if (hex.length !== 2 * bytes || offset + bytes > leafData.length || leafData.write(hex, offset, 'hex') !== bytes) return undefined
    offset += bytes
  }
  return leafData.subarray(0, offset)
}

function badHex(index: number): MerkleError {
  return new MerkleError('invalid_argument', `hash ${index} must be 64 hex digits`)
}

/**
 * MTH(D[n]) (RFC 9162 2.1.1) of leaves given as for buildTree, on several threads: equal to
 * computeRoot() over the same leaves. Unlike computeRoot it holds every node (about 64 bytes
 * per leaf) while it runs. Preconditions as for buildTree.
 */
export async function computeRootParallel(leafData: Uint8Array, options: BulkOptions = {}): Promise<Uint8Array> {
  return (await buildTree(leafData, options)).root()
}
