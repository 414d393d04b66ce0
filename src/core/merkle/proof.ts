/**
 * Verifying RFC 9162 inclusion (2.1.3.2) and consistency (2.1.4.2) proofs.
 *
 * Computing a root from a proof is kept apart from comparing it with a trusted root, and a
 * mismatch carries both roots. Sizes come from untrusted input (query strings, evidence
 * packages), so the bit walks use arithmetic that stays exact up to 2^53, not 32-bit operators.
 */
import {MerkleError, requireHashLength, requireIntegerInRange} from './errors.js'
import {toHex} from '../hex.js'
import {HASH_SIZE, emptyRoot, hashChildren} from './hasher.js'

/**
 * The root implied by an inclusion proof, by the algorithm of RFC 9162 2.1.3.2.
 * Preconditions: 0 <= index < size <= 2^53 - 1 and leafHash is 32 bytes (else `invalid_argument`).
 * Throws `invalid_proof` when the proof has the wrong number of elements for (index, size) or
 * an element that is not 32 bytes.
 */
export function rootFromInclusionProof(
  index: number,
  size: number,
  leafHash: Uint8Array,
  proof: Uint8Array[],
): Uint8Array {
  requireIntegerInRange('size', size, 1, Number.MAX_SAFE_INTEGER)
  requireIntegerInRange('index', index, 0, size - 1)
  requireHashLength('leafHash', leafHash)
  requireProofElements(proof)
  let fn = index
  let sn = size - 1
  let r = leafHash
  for (const p of proof) {
    if (sn === 0) throw new MerkleError('invalid_proof', `inclusion proof is longer than a tree of size ${size} needs`)
    if (isOdd(fn) || fn === sn) {
      r = hashChildren(p, r)
      // Skip the levels where this node has no right sibling (the ragged right edge).
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn)
        sn = half(sn)
      }
    } else {
      r = hashChildren(r, p)
    }
    fn = half(fn)
    sn = half(sn)
  }
  if (sn !== 0) throw new MerkleError('invalid_proof', `inclusion proof is shorter than a tree of size ${size} needs`)
  return r === leafHash ? new Uint8Array(leafHash) : r
}

/**
 * Checks that leafHash is the leaf at `index` of the tree of `size` leaves whose root is `root`.
 * Preconditions: those of rootFromInclusionProof, and root is 32 bytes (else `invalid_argument`).
 * Throws `invalid_proof` for a malformed proof, `root_mismatch` (expected = root, actual = the
 * recomputed root, both hex) when the proof leads elsewhere.
 */
export function verifyInclusion(
  index: number,
  size: number,
  leafHash: Uint8Array,
  proof: Uint8Array[],
  root: Uint8Array,
): void {
  requireHashLength('root', root)
  const computed = rootFromInclusionProof(index, size, leafHash, proof)
  requireSameRoot(`root does not match the inclusion proof for leaf ${index} of ${size}`, root, computed)
}

/** Nodes per level from which InclusionVerifier drops the ones no later leaf can use. */
const PRUNE_FROM = 16

/**
 * Verifies many inclusion proofs against one tree (size, root), as an evidence package holds
 * them. Every node a verified proof hashed its way through, and every sibling it used, is
 * proven: it lies on a path to the trusted root. A later proof does not hash where its node, the
 * given sibling and their parent are all proven (comparisons only), and fails at once where it
 * disagrees with a proven node. So a package with every leaf costs about one hash per tree node
 * instead of log2(size) per leaf.
 *
 * `proven` only ever answers true for a proof that verifyInclusion accepts; it answers false for
 * anything it cannot settle this way (a mismatch, a malformed element, hex in another letter case
 * than the proven node), and the caller then runs verifyInclusion for the exact verdict and error.
 * No preconditions: invalid sizes or roots make every answer false.
 */
export class InclusionVerifier {
  /** Per level: node position -> proven hash (hex as given). Positions are those of RFC 9162 2.1.3.2's walk. */
  readonly #levels: Map<number, string>[] = []
  readonly #rootHex: string | undefined

  constructor(
    readonly size: number,
    root: Uint8Array,
  ) {
    const usable = Number.isSafeInteger(size) && size >= 1 && root instanceof Uint8Array && root.length === HASH_SIZE
    this.#rootHex = usable ? toHex(root) : undefined
  }

  proven(index: number, leafHash: Uint8Array, proof: readonly unknown[]): boolean {
    if (this.#rootHex === undefined || !Number.isSafeInteger(index) || index < 0 || index >= this.size) return false
    if (!(leafHash instanceof Uint8Array) || leafHash.length !== HASH_SIZE || !Array.isArray(proof)) return false
    let fn = index
    let sn = this.size - 1
    let level = 0
    // The current node, as hex; its bytes only when it had to be hashed (else decoded on demand).
    let rHex = toHex(leafHash)
    let r: Uint8Array | undefined = leafHash
    const found: (number | string)[] = []
    for (let k = 0; k < proof.length; k++) {
      const p = proof[k]
      if (sn === 0 || typeof p !== 'string' || p.length !== 2 * HASH_SIZE) return false
      const siblingLeft = isOdd(fn) || fn === sn
      // The ragged right edge: the node rises unchanged to where it has a left sibling (the
      // RFC shifts after hashing; the hash does not depend on the position, so shift first).
      if (siblingLeft) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn)
          sn = half(sn)
          level++
        }
      }
      const known = this.#levels[level]
      const sibling = siblingLeft ? fn - 1 : fn + 1
      const provenNode = known?.get(fn)
      const provenSibling = known?.get(sibling)
      // A proven position holding anything else cannot lead to the root (short of a collision).
      if ((provenNode !== undefined && provenNode !== rHex) || (provenSibling !== undefined && provenSibling !== p))
        return false
      const provenParent = this.#levels[level + 1]?.get(half(fn))
      if (provenNode !== undefined && provenSibling !== undefined && provenParent !== undefined) {
        // Node, sibling and parent all lie on verified paths: the parent is their hash already.
        rHex = provenParent
        r = undefined
      } else {
        const pBytes = Buffer.from(p, 'hex')
        if (pBytes.length !== HASH_SIZE) return false
        r ??= Buffer.from(rHex, 'hex')
        found.push(level, fn, rHex, level, sibling, p)
        r = siblingLeft ? hashChildren(pBytes, r) : hashChildren(r, pBytes)
        rHex = toHex(r)
      }
      fn = half(fn)
      sn = half(sn)
      level++
    }
    if (sn !== 0 || rHex !== this.#rootHex) return false
    found.push(level, 0, rHex)
    this.#remember(found, index)
    return true
  }

  /**
   * Records (level, position, hex) triples of a proof just shown to reach the root, for the leaf
   * `index`. Leaves usually come in ascending index order (a package's events do), and then no
   * later path uses a node left of (index >> level) - 1 at any level: those are dropped, so the
   * memory stays a few nodes per level. Out of order, a dropped node only means more hashing.
   */
  #remember(found: (number | string)[], index: number): void {
    for (let i = 0; i < found.length; i += 3) {
      const level = found[i] as number
      const nodes = (this.#levels[level] ??= new Map())
      nodes.set(found[i + 1] as number, found[i + 2] as string)
      if (nodes.size > PRUNE_FROM) {
        const keepFrom = Math.floor(index / 2 ** level) - 1
        for (const position of nodes.keys()) if (position < keepFrom) nodes.delete(position)
      }
    }
  }
}

/**
 * Checks that the tree of size2 leaves with root2 extends the tree of size1 leaves with root1,
 * by the algorithm of RFC 9162 2.1.4.2.
 * Preconditions: 0 <= size1 <= size2 <= 2^53 - 1, both roots 32 bytes (else `invalid_argument`).
 * size1 = size2 needs an empty proof and equal roots; size1 = 0 needs an empty proof and root1 =
 * MTH({}) (every tree extends the empty one). Throws `invalid_proof` for a malformed proof and
 * `root_mismatch` (naming which root, with expected/actual hex) when a root does not match.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  root1: Uint8Array,
  root2: Uint8Array,
  proof: Uint8Array[],
): void {
  requireIntegerInRange('size2', size2, 0, Number.MAX_SAFE_INTEGER)
  requireIntegerInRange('size1', size1, 0, size2)
  requireHashLength('root1', root1)
  requireHashLength('root2', root2)
  requireProofElements(proof)
  if (size1 === 0 || size1 === size2) {
    if (proof.length > 0)
      throw new MerkleError('invalid_proof', `consistency proof from size ${size1} to ${size2} must be empty`)
    if (size1 === 0) requireSameRoot('root1 is not the root of the empty tree', root1, emptyRoot())
    else requireSameRoot(`trees of the same size ${size1} have different roots`, root1, root2)
    return
  }
  const [firstRoot, secondRoot] = rootsFromConsistencyProof(size1, size2, root1, proof)
  requireSameRoot(`root1 does not match the proof for size ${size1}`, root1, firstRoot)
  requireSameRoot(`root2 does not match the proof for size ${size2}`, root2, secondRoot)
}

// RFC 9162 2.1.4.2 steps 1-7 for 0 < size1 < size2: walks the path once, rebuilding the first
// root (fr) and the second root (sr) side by side.
function rootsFromConsistencyProof(
  size1: number,
  size2: number,
  root1: Uint8Array,
  proof: Uint8Array[],
): [Uint8Array, Uint8Array] {
  if (proof.length === 0) throw new MerkleError('invalid_proof', 'consistency proof is empty')
  // Step 2: when the first tree is a perfect subtree, its root is where the path starts.
  const path = isPowerOfTwo(size1) ? [root1, ...proof] : proof
  let fn = size1 - 1
  let sn = size2 - 1
  while (isOdd(fn)) {
    fn = half(fn)
    sn = half(sn)
  }
  let fr = path[0]!
  let sr = path[0]!
  for (const c of path.slice(1)) {
    if (sn === 0)
      throw new MerkleError('invalid_proof', `consistency proof is longer than sizes ${size1} and ${size2} need`)
    if (isOdd(fn) || fn === sn) {
      fr = hashChildren(c, fr)
      sr = hashChildren(c, sr)
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn)
        sn = half(sn)
      }
    } else {
      sr = hashChildren(sr, c)
    }
    fn = half(fn)
    sn = half(sn)
  }
  if (sn !== 0)
    throw new MerkleError('invalid_proof', `consistency proof is shorter than sizes ${size1} and ${size2} need`)
  return [fr, sr]
}

function requireProofElements(proof: Uint8Array[]): void {
  if (!Array.isArray(proof)) throw new MerkleError('invalid_proof', 'proof must be an array of hashes')
  proof.forEach((element, i) => {
    if (!(element instanceof Uint8Array) || element.length !== HASH_SIZE) {
      throw new MerkleError('invalid_proof', `proof element ${i} is not a 32-byte hash`)
    }
  })
}

function requireSameRoot(message: string, trusted: Uint8Array, computed: Uint8Array): void {
  const expected = toHex(trusted)
  const actual = toHex(computed)
  if (expected !== actual) throw new MerkleError('root_mismatch', message, {expected, actual})
}

function isOdd(n: number): boolean {
  return n % 2 === 1
}

function half(n: number): number {
  return Math.floor(n / 2)
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && !isOdd(n)) n = half(n)
  return n === 1
}
