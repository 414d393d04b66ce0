/**
 * The tree's level buffers (see tree.ts) built for many leaves at once, in aligned blocks that
 * several threads can hash independently, then stitched together.
 *
 * Why aligned blocks are enough: every split point of RFC 9162 2.1.1 is a power of two, so the
 * stored nodes are exactly the complete aligned subtrees. With blocks of B = 2^b leaves starting
 * at multiples of B, every node of level k <= b covers leaves of one block only and is computed
 * from that block alone (the last block may be short: it simply has fewer complete nodes). The
 * nodes above level b, about n / B of them, are hashed afterwards from level b. The hashes are
 * the same calls on the same bytes as append() makes, in a different order.
 */
import {MerkleError, requireIntegerInRange} from './errors.js'
import {HASH_SIZE, writeLeafHashFrom, writePairHash} from './hasher.js'
import {INITIAL_CAPACITY, MAX_LEAVES} from './tree.js'

/** One bulk build: what every thread working on it shares. */
export interface BlockJob {
  /** The `size` leaves d_i, 32 bytes each, back to back. */
  readonly leafData: Buffer
  readonly size: number
  /** Leaves per block, a power of two. */
  readonly blockSize: number
  /** levels[k] has room for the floor(size / 2^k) nodes of level k, k = 0..floor(log2 size). */
  readonly levels: Buffer[]
  /** [next block to claim, blocks finished]; read and updated with Atomics only. */
  readonly progress: Int32Array
}

/**
 * A job over `leafData` (size * 32 bytes). With `shared`, every buffer lives in a
 * SharedArrayBuffer that worker threads can write (leafData is copied there unless it already
 * does). Preconditions: leafData.length is a multiple of 32 and at most 2^27 leaves; blockSize is
 * a power of two; otherwise `invalid_argument`.
 */
export function createBlockJob(leafData: Uint8Array, blockSize: number, shared: boolean): BlockJob {
  if (!(leafData instanceof Uint8Array) || leafData.length % HASH_SIZE !== 0) {
    throw new MerkleError('invalid_argument', 'leafData must be 32-byte leaves back to back')
  }
  const size = leafData.length / HASH_SIZE
  requireIntegerInRange('leaf count', size, 0, MAX_LEAVES)
  requireIntegerInRange('blockSize', blockSize, 1, MAX_LEAVES)
  if ((blockSize & (blockSize - 1)) !== 0) throw new MerkleError('invalid_argument', 'blockSize must be a power of two')
  const allocate = (bytes: number) => (shared ? Buffer.from(new SharedArrayBuffer(bytes)) : Buffer.alloc(bytes))
  let leaves = Buffer.from(leafData.buffer, leafData.byteOffset, leafData.byteLength)
  if (shared && !(leafData.buffer instanceof SharedArrayBuffer)) {
    leaves = allocate(leafData.byteLength)
    leaves.set(leafData)
  }
  const levels: Buffer[] = []
  for (let nodes = size; nodes >= 1; nodes = Math.floor(nodes / 2)) {
    levels.push(allocate(levelCapacity(nodes) * HASH_SIZE))
  }
  const progress = shared ? new Int32Array(new SharedArrayBuffer(8)) : new Int32Array(2)
  return {leafData: leaves, size, blockSize, levels, progress}
}

export function blockCount(job: BlockJob): number {
  return Math.ceil(job.size / job.blockSize)
}

export function isFinished(job: BlockJob): boolean {
  return Atomics.load(job.progress, 1) === blockCount(job)
}

/**
 * Claims blocks one at a time until none is left and hashes each: the same loop runs on the
 * calling thread and in every worker, so a thread that starts late simply claims fewer blocks.
 * Returns how many blocks this call hashed.
 */
export function hashClaimedBlocks(job: BlockJob): number {
  const blocks = blockCount(job)
  let hashed = 0
  for (let block = Atomics.add(job.progress, 0, 1); block < blocks; block = Atomics.add(job.progress, 0, 1)) {
    hashBlock(job, block)
    hashed++
    // After the block's writes: whoever reads this count also sees those nodes (Atomics order).
    Atomics.add(job.progress, 1, 1)
  }
  return hashed
}

/** Leaf hashes and every complete node inside block `block`: levels 0..b of its leaves. */
export function hashBlock(job: BlockJob, block: number): void {
  const start = block * job.blockSize
  const end = Math.min(job.size, start + job.blockSize)
  for (let i = start; i < end; i++) writeLeafHashFrom(job.leafData, i * HASH_SIZE, job.levels[0]!, i * HASH_SIZE)
  hashParents(job.levels, start, end, 0, Math.log2(job.blockSize))
}

/** After every block is hashed: the levels above the blocks, from level b up to the top. */
export function stitchBlocks(job: BlockJob): void {
  hashParents(job.levels, 0, job.size, Math.log2(job.blockSize), job.levels.length - 1)
}

// For k = fromLevel..toLevel-1, the level k+1 nodes covering leaves [start, end) from their two
// children at level k (RFC 9162 2.1.1: MTH of 2^(k+1) leaves splits at k' = 2^k). `start` is a
// multiple of 2^toLevel, so a node either lies wholly inside the range or wholly outside.
function hashParents(levels: Buffer[], start: number, end: number, fromLevel: number, toLevel: number): void {
  for (let k = fromLevel; k < toLevel; k++) {
    const first = Math.floor(start / 2 ** (k + 1))
    const last = Math.floor(end / 2 ** (k + 1))
    for (let i = first; i < last; i++) {
      writePairHash(levels[k]!, 2 * i * HASH_SIZE, levels[k + 1]!, i * HASH_SIZE)
    }
  }
}

// The capacity append() would have grown a level of `nodes` nodes to (doubling from
// INITIAL_CAPACITY, at most MAX_LEAVES), so a tree built in bulk takes the same memory and
// reallocates at the same sizes as one built leaf by leaf. Untouched spare pages cost no RAM.
function levelCapacity(nodes: number): number {
  let capacity = INITIAL_CAPACITY
  while (capacity < nodes) capacity *= 2
  return Math.min(capacity, MAX_LEAVES)
}
