/**
 * MTH(D[n]) (RFC 9162 2.1.1) recomputed from the leaf data alone, for auditing: it never looks at
 * a MerkleTree or any cached node, so it checks the tree's incremental bookkeeping independently.
 */
import {requireHashLength} from './errors.js'
import {HASH_SIZE, emptyRoot, writeLeafHash, writePairHash} from './hasher.js'

// One slot per level; 64 levels outlast any tree a Number can count (2^53 leaves).
const MAX_DEPTH = 64

/**
 * Streams the leaves once, holding only the stack of pending perfect subtrees (at most one per
 * level, so O(log n) memory). The result equals the recursive RFC definition because every
 * RFC split point k is a power of two: the stack, read left to right, holds exactly the perfect
 * left subtrees of the decomposition of n, and folding them from the right rebuilds MTH.
 * Precondition: every leaf is 32 bytes (the raw bytes of an event hash).
 */
export function computeRoot(leaves: Iterable<Uint8Array>): Uint8Array {
  const stack = Buffer.alloc(MAX_DEPTH * HASH_SIZE)
  let depth = 0
  let count = 0
  for (const leaf of leaves) {
    if (!(leaf instanceof Uint8Array) || leaf.length !== HASH_SIZE) requireHashLength(`leaf ${count}`, leaf)
    writeLeafHash(leaf, stack, depth * HASH_SIZE)
    depth++
    count++
    // The new leaf closes one perfect subtree per trailing zero bit of the new count: merge the
    // top two slots (left sibling below, right sibling on top) that many times.
    for (let closed = count; closed % 2 === 0; closed /= 2) {
      depth--
      writePairHash(stack, (depth - 1) * HASH_SIZE, stack, (depth - 1) * HASH_SIZE)
    }
  }
  if (count === 0) return emptyRoot()
  // Fold the ragged right edge: each remaining subtree is the left child of everything after it.
  for (; depth > 1; depth--) {
    writePairHash(stack, (depth - 2) * HASH_SIZE, stack, (depth - 2) * HASH_SIZE)
  }
  return new Uint8Array(stack.subarray(0, HASH_SIZE))
}
