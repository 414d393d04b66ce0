/**
 * The RFC 9162 section 2.1 reads (roots, inclusion and consistency proofs) over a tree whose
 * complete aligned subtrees are stored somewhere: in memory (tree.ts) or in hash tiles (tiled.ts).
 * A subclass says where a stored node is; every ragged right edge is computed from stored nodes.
 */
import {requireIntegerInRange} from './errors.js'
import {toHex} from '../hex.js'
import {emptyRoot, hashChildren} from './hasher.js'

export abstract class NodeTree {
  /** The number of leaves the tree holds. */
  abstract get size(): number

  /**
   * The hash of the complete subtree of 2^level leaves starting at leaf index * 2^level, possibly
   * a view the caller must not hand out. Precondition: (index + 1) * 2^level <= this.size.
   */
  protected abstract storedNode(level: number, index: number): Uint8Array

  /** MTH of the first `size` leaves (RFC 9162 2.1.1). Precondition: integer 0 <= size <= this.size. */
  rootAt(size: number): Uint8Array {
    requireIntegerInRange('size', size, 0, this.size)
    return size === 0 ? emptyRoot() : new Uint8Array(this.#subtreeHash(0, size))
  }

  /**
   * The RFC 9162 2.1.3.1 audit path PATH(index, D[0:size]), leaf level first.
   * Preconditions: 0 <= index < size <= this.size; size defaults to this.size.
   */
  inclusionProof(index: number, size: number = this.size): Uint8Array[] {
    requireIntegerInRange('size', size, 1, this.size)
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
    requireIntegerInRange('size', size, 1, this.size)
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
  consistencyProof(first: number, second: number = this.size): Uint8Array[] {
    requireIntegerInRange('second', second, 0, this.size)
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
      return this.storedNode(level, start >>> level)
    }
    const k = largestPowerOfTwoBelow(n)
    return hashChildren(this.#subtreeHash(start, start + k), this.#subtreeHash(start + k, end))
  }
}

/** The k of RFC 9162 2.1.1: the largest power of two smaller than n. Precondition: 2 <= n < 2^32. */
function largestPowerOfTwoBelow(n: number): number {
  // A shift, not 2 ** x (a call to pow): sizes stay below 2^31, far from the sign bit.
  return 1 << (31 - Math.clz32(n - 1))
}
