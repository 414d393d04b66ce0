/**
 * An append-only RFC 9162 section 2.1 Merkle tree held in memory.
 *
 * Storage: level k is one flat buffer holding, back to back, the 32-byte hashes of every complete
 * aligned subtree of 2^k leaves (node i covers leaves [i*2^k, (i+1)*2^k)). Level 0 holds the leaf
 * hashes. Together that is under 2 * 32 bytes per leaf (about 64 MB at a million leaves) and no
 * object per node. Any subtree of a tree of `size <= this.size` leaves is either one of these
 * stored nodes or a ragged right edge, computed on the fly from at most log2(size) stored nodes.
 */
import {MerkleError, requireHashLength, requireIntegerInRange, toHex} from './errors.js'
import {HASH_SIZE, emptyRoot, hashChildren, writeLeafHash, writeLeafHashOfHex, writePairHash} from './hasher.js'

// A level-0 buffer cannot exceed Node's 4 GiB Buffer limit: 2^27 leaves of 32 bytes.
export const MAX_LEAVES = 2 ** 27
/** Nodes a level holds when first allocated; it then doubles (see #reserve). */
export const INITIAL_CAPACITY = 1024
const HEX_HASH = /^[0-9a-fA-F]{64}$/

/** Create it empty (no preconditions) and append the leaves in `index` order. */
export class MerkleTree {
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
      throw new MerkleError('invalid_argument', `a tree of ${size} leaves has ${levelCount} levels, got ${levels.length}`)
    }
    levels.forEach((level, k) => {
      if (!Buffer.isBuffer(level) || level.length < Math.floor(size / 2 ** k) * HASH_SIZE) {
        throw new MerkleError('invalid_argument', `level ${k} must be a Buffer of at least ${Math.floor(size / 2 ** k)} nodes`)
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
   * Appends one leaf: d_i, the 32 raw bytes of an event hash (CONTRACT.md section 3).
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

  /** MTH of the first `size` leaves (RFC 9162 2.1.1). Precondition: integer 0 <= size <= this.size. */
  rootAt(size: number): Uint8Array {
    requireIntegerInRange('size', size, 0, this.#size)
    return size === 0 ? emptyRoot() : new Uint8Array(this.#subtreeHash(0, size))
  }

  /** The leaf hash SHA-256(0x00 || d_index). Precondition: 0 <= index < this.size. */
  leafHash(index: number): Uint8Array {
    requireIntegerInRange('index', index, 0, this.#size - 1)
    return new Uint8Array(this.#storedNode(0, index))
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

  /**
   * The RFC 9162 2.1.3.1 audit path PATH(index, D[0:size]), leaf level first.
   * Preconditions: 0 <= index < size <= this.size; size defaults to this.size.
   */
  inclusionProof(index: number, size: number = this.#size): Uint8Array[] {
    requireIntegerInRange('size', size, 1, this.#size)
    requireIntegerInRange('index', index, 0, size - 1)
    const proof: Uint8Array[] = []
    this.#walkPath(index, size, (start, end) => proof.push(new Uint8Array(this.#subtreeHash(start, end))))
    return proof.reverse()
  }

  /**
   * Audit paths of many leaves of the tree of `size` leaves, as hex, for an evidence package:
   * the returned function gives inclusionProof(index, size) in hex. Consecutive indexes share the
   * upper part of their paths; those nodes (including hashes of the ragged right edge) are
   * computed and encoded once, which makes a path for every leaf cost about one hex encoding per
   * leaf instead of log2(size). Precondition: 1 <= size <= this.size; each index as for
   * inclusionProof (any order works; ascending order is the fast one).
   */
  inclusionProofsHex(size: number): (index: number) => string[] {
    requireIntegerInRange('size', size, 1, this.#size)
    // Per depth of the walk: the sibling range last seen there and its hex.
    const starts: number[] = []
    const ends: number[] = []
    const hexes: string[] = []
    return (index: number): string[] => {
      requireIntegerInRange('index', index, 0, size - 1)
      const path: string[] = []
      this.#walkPath(index, size, (siblingStart, siblingEnd, depth) => {
        if (starts[depth] !== siblingStart || ends[depth] !== siblingEnd) {
          starts[depth] = siblingStart
          ends[depth] = siblingEnd
          hexes[depth] = toHex(this.#subtreeHash(siblingStart, siblingEnd))
        }
        path.push(hexes[depth]!)
      })
      return path.reverse()
    }
  }

  /**
   * The RFC 9162 2.1.4.1 consistency proof PROOF(first, D[0:second]); empty when first is 0 or
   * equals second. Preconditions: 0 <= first <= second <= this.size; second defaults to this.size.
   */
  consistencyProof(first: number, second: number = this.#size): Uint8Array[] {
    requireIntegerInRange('second', second, 0, this.#size)
    requireIntegerInRange('first', first, 0, second)
    const proof: Uint8Array[] = []
    if (first > 0 && first < second) this.#collectSubproof(first, 0, second, true, proof)
    return proof.map((node) => new Uint8Array(node))
  }

  // RFC 9162 2.1.3.1: PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) when m < k,
  // PATH(m - k, D[k:n]) : MTH(D[0:k]) otherwise. Walks from the root down and hands each sibling
  // range [start, end) to `visit` with its depth, so the root's child comes first and the leaf's
  // sibling last (a proof lists them the other way round).
  #walkPath(index: number, size: number, visit: (start: number, end: number, depth: number) => void): void {
    let m = index
    let start = 0
    let end = size
    for (let depth = 0; end - start > 1; depth++) {
      const k = largestPowerOfTwoBelow(end - start)
      if (m < k) {
        visit(start + k, end, depth)
        end = start + k
      } else {
        visit(start, start + k, depth)
        m -= k
        start += k
      }
    }
  }

  // RFC 9162 2.1.4.1: SUBPROOF(m, D[n], b). `complete` is b: whether D[0:m] is a subtree whose
  // hash the verifier already knows (then it is left out of the proof).
  #collectSubproof(m: number, start: number, end: number, complete: boolean, out: Uint8Array[]): void {
    const n = end - start
    if (m === n) {
      if (!complete) out.push(this.#subtreeHash(start, end))
      return
    }
    const k = largestPowerOfTwoBelow(n)
    if (m <= k) {
      this.#collectSubproof(m, start, start + k, complete, out)
      out.push(this.#subtreeHash(start + k, end))
    } else {
      this.#collectSubproof(m - k, start + k, end, false, out)
      out.push(this.#subtreeHash(start, start + k))
    }
  }

  // MTH(D[start:end]) for a range the RFC recursion produces: `start` is a multiple of the
  // largest power of two not above end - start. A perfect range is one stored node (a view, not
  // a copy: callers copy before handing it out); a ragged one splits as in RFC 9162 2.1.1.
  #subtreeHash(start: number, end: number): Uint8Array {
    const n = end - start
    if ((n & (n - 1)) === 0) {
      const level = 31 - Math.clz32(n)
      return this.#storedNode(level, start >>> level)
    }
    const k = largestPowerOfTwoBelow(n)
    return hashChildren(this.#subtreeHash(start, start + k), this.#subtreeHash(start + k, end))
  }

  #storedNode(level: number, index: number): Uint8Array {
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

/** The k of RFC 9162 2.1.1: the largest power of two smaller than n. Precondition: 2 <= n < 2^32. */
function largestPowerOfTwoBelow(n: number): number {
  // A shift, not 2 ** x (a call to pow): sizes stay below MAX_LEAVES = 2^27, far from the sign bit.
  return 1 << (31 - Math.clz32(n - 1))
}
