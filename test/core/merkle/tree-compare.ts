/** Comparing two MerkleTrees through their public answers, for the bulk-built trees. */
import {expect} from 'chai'
import type {MerkleTree} from '../../../src/core/merkle/index.js'
import {hex} from './fixtures.js'

/**
 * Sizes worth probing in a tree of `size` leaves: both ends, the middle, every power of two
 * below it and its neighbours (where the RFC 9162 splits change), plus `extra`.
 */
export function probeSizes(size: number, extra: readonly number[] = []): number[] {
  const probes = new Set<number>([0, 1, size - 1, size, Math.floor(size / 2), ...extra])
  for (let p = 1; p <= size; p *= 2) [p - 1, p, p + 1].forEach((q) => probes.add(q))
  return [...probes].filter((n) => Number.isSafeInteger(n) && n >= 0 && n <= size).sort((a, b) => a - b)
}

/**
 * Same size, root, and for every probed m: rootAt(m), leafHash, inclusionProof(m) in the whole
 * tree and in the tree of m + 1 leaves, consistencyProof(m) to the whole tree and from m to m + 1.
 */
export function expectSameTree(actual: MerkleTree, expected: MerkleTree, extra: readonly number[] = []): void {
  const size = expected.size
  expect(actual.size).to.equal(size)
  expect(hex(actual.root()), 'root()').to.equal(hex(expected.root()))
  for (const m of probeSizes(size, extra)) {
    expect(hex(actual.rootAt(m)), `rootAt(${m})`).to.equal(hex(expected.rootAt(m)))
    expect(actual.consistencyProof(m).map(hex), `PROOF(${m}, ${size})`).to.deep.equal(
      expected.consistencyProof(m).map(hex),
    )
    if (m >= size) continue
    expect(hex(actual.leafHash(m)), `leafHash(${m})`).to.equal(hex(expected.leafHash(m)))
    expect(actual.inclusionProof(m).map(hex), `PATH(${m}, ${size})`).to.deep.equal(expected.inclusionProof(m).map(hex))
    expect(actual.inclusionProof(m, m + 1).map(hex), `PATH(${m}, ${m + 1})`).to.deep.equal(
      expected.inclusionProof(m, m + 1).map(hex),
    )
    expect(actual.consistencyProof(m, m + 1).map(hex), `PROOF(${m}, ${m + 1})`).to.deep.equal(
      expected.consistencyProof(m, m + 1).map(hex),
    )
  }
}

/** The leaves as buildTree takes them: n * 32 bytes back to back. */
export function concatLeaves(leaves: readonly Uint8Array[]): Buffer {
  return Buffer.concat(leaves)
}
