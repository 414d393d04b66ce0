/**
 * A deliberately naive reference for cross-checking: RFC 9162 2.1.1 (MTH), 2.1.3.1 (PATH) and
 * 2.1.4.1 (PROOF, SUBPROOF) transcribed as literally as possible, with array slices and plain
 * recursion, O(n) hashes per call and no caching. It shares nothing with src/core/merkle except
 * the SHA-256 door of src/core/crypto.ts.
 */
import {sha256} from '../../../src/core/crypto.js'

type Leaves = readonly Uint8Array[]

/** k: the largest power of two smaller than n, found by counting up (n > 1). */
export function referenceSplit(n: number): number {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

export function referenceLeafHash(d: Uint8Array): Buffer {
  return sha256(Buffer.concat([Buffer.from([0x00]), d]))
}

/** MTH(D[n]). */
export function referenceRoot(D: Leaves): Buffer {
  const n = D.length
  if (n === 0) return sha256('')
  if (n === 1) return referenceLeafHash(D[0]!)
  const k = referenceSplit(n)
  return sha256(Buffer.concat([Buffer.from([0x01]), referenceRoot(D.slice(0, k)), referenceRoot(D.slice(k, n))]))
}

/** PATH(m, D[n]) for 0 <= m < n. */
export function referencePath(m: number, D: Leaves): Buffer[] {
  const n = D.length
  if (n === 1) return []
  const k = referenceSplit(n)
  if (m < k) return [...referencePath(m, D.slice(0, k)), referenceRoot(D.slice(k, n))]
  return [...referencePath(m - k, D.slice(k, n)), referenceRoot(D.slice(0, k))]
}

/** PROOF(m, D[n]) for 0 < m < n; the RFC leaves m = 0 and m = n undefined, both give [] here. */
export function referenceConsistency(m: number, D: Leaves): Buffer[] {
  if (m === 0 || m === D.length) return []
  return referenceSubproof(m, D, true)
}

function referenceSubproof(m: number, D: Leaves, b: boolean): Buffer[] {
  const n = D.length
  if (m === n) return b ? [] : [referenceRoot(D)]
  const k = referenceSplit(n)
  if (m <= k) return [...referenceSubproof(m, D.slice(0, k), b), referenceRoot(D.slice(k, n))]
  return [...referenceSubproof(m - k, D.slice(k, n), false), referenceRoot(D.slice(0, k))]
}

/**
 * The same three definitions for a tree whose n leaves all have the same leaf hash, where D[a:b]
 * depends only on b - a. Memoised on that length, it reaches sizes up to 2^53 that no tree in
 * memory can, to check that verifiers do their bit walks in exact arithmetic.
 */
export function uniformTree(leafHash: Uint8Array): {
  root(n: number): Buffer
  path(m: number, n: number): Buffer[]
  consistency(m: number, n: number): Buffer[]
} {
  const roots = new Map<number, Buffer>()
  const root = (n: number): Buffer => {
    if (n === 1) return Buffer.from(leafHash)
    let known = roots.get(n)
    if (!known) {
      const k = referenceSplit(n)
      known = sha256(Buffer.concat([Buffer.from([0x01]), root(k), root(n - k)]))
      roots.set(n, known)
    }
    return known
  }
  const path = (m: number, n: number): Buffer[] => {
    if (n === 1) return []
    const k = referenceSplit(n)
    return m < k ? [...path(m, k), root(n - k)] : [...path(m - k, n - k), root(k)]
  }
  const subproof = (m: number, n: number, b: boolean): Buffer[] => {
    if (m === n) return b ? [] : [root(n)]
    const k = referenceSplit(n)
    return m <= k ? [...subproof(m, k, b), root(n - k)] : [...subproof(m - k, n - k, false), root(k)]
  }
  return {root, path, consistency: (m, n) => (m === 0 || m === n ? [] : subproof(m, n, true))}
}
