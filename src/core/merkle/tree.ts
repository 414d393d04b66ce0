/**
 * An append-only RFC 9162 section 2.1 Merkle tree held in memory.
 *
 * Storage: level k is one flat buffer holding, back to back, the 32-byte hashes of every complete
 * aligned subtree of 2^k leaves (node i covers leaves [i*2^k, (i+1)*2^k)). Level 0 holds the leaf
 * hashes. Together that is under 2 * 32 bytes per leaf (about 64 MB at a million leaves) and no
 * object per node. Any subtree of a tree of `size <= this.size` leaves is either one of these
 * stored nodes or a ragged right edge, computed on the fly from at most log2(size) stored nodes.
 */
import {MerkleError, requireHashLength, requireIntegerInRange} from './errors.js'
import {HASH_SIZE, writeLeafHash, writeLeafHashOfHex, writePairHash} from './hasher.js'
import {NodeTree} from './node-tree.js'

// A level-0 buffer cannot exceed Node's 4 GiB Buffer limit: 2^27 leaves of 32 bytes.
export const MAX_LEAVES = 2 ** 27
/** Nodes a level holds when first allocated; it then doubles (see #reserve). */
export const INITIAL_CAPACITY = 1024
const HEX_HASH = /^[0-9a-fA-F]{64}$/

/** Create it empty (no preconditions) and append the leaves in `index` order. */
export class MerkleTree extends NodeTree {
  #size = 0
  #levels: Buffer[] = []
  #rootCache: Uint8Array | undefined

  /**
   * A tree of `size` leaves over level buffers built elsewhere (levels.ts builds them in bulk, on
   * several threads): levels[k] holds from offset 0 the floor(size / 2^k) nodes of level k as
   * described above, possibly followed by spare capacity. The tree takes the buffers over as they
   * are, without copying them or checking their hashes, and appends after them as usual.
   * Preconditions: 0 <= size <= 2^27, exactly one level per k = 0..floor(log2 size), each long
   * enough; otherwise `invalid_argument`.
   */
  static fromLevels(size: number, levels: readonly Buffer[]): MerkleTree {
    requireIntegerInRange('size', size, 0, MAX_LEAVES)
    const levelCount = size === 0 ? 0 : 32 - Math.clz32(size)
    if (levels.length !== levelCount) {
      throw new MerkleError(
        'invalid_argument',
        `a tree of ${size} leaves has ${levelCount} levels, got ${levels.length}`,
      )
    }
    levels.forEach((level, k) => {
      if (!Buffer.isBuffer(level) || level.length < Math.floor(size / 2 ** k) * HASH_SIZE) {
        throw new MerkleError(
          'invalid_argument',
          `level ${k} must be a Buffer of at least ${Math.floor(size / 2 ** k)} nodes`,
        )
      }
    })
    const tree = new MerkleTree()
    tree.#size = size
    tree.#levels = [...levels]
    return tree
  }

  /** The number of leaves appended so far. */
  get size(): number {
    return this.#size
  }

  /**
   * Appends one leaf: d_i, the 32 raw bytes of an event hash (docs/verification.md 5).
   * Amortised O(1) hashes, O(log n) at worst. Preconditions: leafData is 32 bytes and the tree
   * holds fewer than 2^27 leaves; otherwise `invalid_argument` and the tree is unchanged.
   */
  append(leafData: Uint8Array): void {
    requireHashLength('leafData', leafData)
    this.#reserveLeaf()
    writeLeafHash(leafData, this.#levels[0]!, this.#size * HASH_SIZE)
    this.#completeLeaf()
  }

  /**
   * Appends the leaf whose data is the bytes of an event `hash`, as append() does.
   * Precondition: exactly 64 hex digits (either case); otherwise `invalid_argument`.
   */
  appendHex(hashHex: string): void {
    if (typeof hashHex !== 'string' || !HEX_HASH.test(hashHex)) {
      throw new MerkleError('invalid_argument', 'hashHex must be 64 hex digits')
    }
    this.#reserveLeaf()
    writeLeafHashOfHex(hashHex, this.#levels[0]!, this.#size * HASH_SIZE)
    this.#completeLeaf()
  }

  /** The current root MTH(D[0:size]), MTH({}) when empty; cached until the next append. No preconditions. */
  root(): Uint8Array {
    this.#rootCache ??= this.rootAt(this.#size)
    return new Uint8Array(this.#rootCache)
  }

  /** The leaf hash SHA-256(0x00 || d_index). Precondition: 0 <= index < this.size. */
  leafHash(index: number): Uint8Array {
    requireIntegerInRange('index', index, 0, this.#size - 1)
    return new Uint8Array(this.storedNode(0, index))
  }

  /**
   * The hashes of `count` consecutive complete subtrees of 2^height leaves, the first covering
   * leaves [start * 2^height, (start + 1) * 2^height), back to back (a C2SP tlog-tiles tile).
   * Precondition: (start + count) * 2^height <= this.size; otherwise `invalid_argument`.
   */
  nodeHashes(height: number, start: number, count: number): Buffer {
    requireIntegerInRange('height', height, 0, 31)
    requireIntegerInRange('start', start, 0, MAX_LEAVES)
    requireIntegerInRange('count', count, 0, Math.floor(this.#size / 2 ** height) - start)
    return Buffer.from(this.#levels[height]?.subarray(start * HASH_SIZE, (start + count) * HASH_SIZE) ?? [])
  }

  protected storedNode(level: number, index: number): Uint8Array {
    return this.#levels[level]!.subarray(index * HASH_SIZE, (index + 1) * HASH_SIZE)
  }

  #reserveLeaf(): void {
    if (this.#size >= MAX_LEAVES) throw new MerkleError('invalid_argument', `tree is full (${MAX_LEAVES} leaves)`)
    this.#reserve(0, this.#size + 1)
  }

  // After leaf `size` is written: every level where the new node is a right child gains its
  // parent (node i at level k completes a pair exactly when i is odd).
  #completeLeaf(): void {
    let index = this.#size
    for (let level = 0; index % 2 === 1; level++) {
      const parent = (index - 1) / 2
      this.#reserve(level + 1, parent + 1)
      writePairHash(this.#levels[level]!, (index - 1) * HASH_SIZE, this.#levels[level + 1]!, parent * HASH_SIZE)
      index = parent
    }
    this.#size++
    this.#rootCache = undefined
  }

  // Grows level `level` by doubling so that it holds `nodes` nodes: amortised O(1) per append.
  #reserve(level: number, nodes: number): void {
    const current = this.#levels[level]
    const needed = nodes * HASH_SIZE
    if (current && current.length >= needed) return
    const capacity = Math.max(needed, current ? current.length * 2 : INITIAL_CAPACITY * HASH_SIZE)
    const grown = Buffer.alloc(Math.min(capacity, MAX_LEAVES * HASH_SIZE))
    if (current) current.copy(grown)
    this.#levels[level] = grown
  }
}
