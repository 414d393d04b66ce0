import {expect} from 'chai'
import fc from 'fast-check'
import {InclusionVerifier, MerkleError, verifyInclusion} from '../../../src/core/merkle/index.js'
import {hex, leafDataList, treeOf} from './fixtures.js'
import {corruptInclusion, type InclusionCase} from './mutations.js'

function acceptedAlone(c: InclusionCase): boolean {
  try {
    verifyInclusion(c.index, c.size, c.leafHash, c.proof, c.root)
    return true
  } catch (error) {
    if (error instanceof MerkleError) return false
    throw error
  }
}

function casesOf(size: number): InclusionCase[] {
  const tree = treeOf(leafDataList(size))
  const root = tree.root()
  return Array.from({length: size}, (_, index) => ({
    index,
    size,
    leafHash: tree.leafHash(index),
    proof: tree.inclusionProof(index),
    root,
  }))
}

describe('InclusionVerifier (many proofs of one tree)', () => {
  it('settles every valid proof of trees of 1..70 leaves, in index order and in reverse', () => {
    for (let size = 1; size <= 70; size++) {
      const cases = casesOf(size)
      for (const order of [cases, [...cases].reverse()]) {
        const verifier = new InclusionVerifier(size, cases[0]!.root)
        for (const c of order)
          expect(verifier.proven(c.index, c.leafHash, c.proof.map(hex)), `size ${size} index ${c.index}`).to.equal(true)
      }
    }
  })

  it('settles valid proofs in any order, for any subset of leaves (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 300}),
        fc.infiniteStream(fc.nat()),
        fc.integer({min: 1, max: 40}),
        (size, picks, count) => {
          const cases = casesOf(size)
          const verifier = new InclusionVerifier(size, cases[0]!.root)
          const it = picks[Symbol.iterator]()
          for (let k = 0; k < count; k++) {
            const c = cases[it.next().value! % size]!
            if (!verifier.proven(c.index, c.leafHash, c.proof.map(hex))) return false
          }
          return true
        },
      ),
      {numRuns: 60},
    )
  })

  it('never accepts what verifyInclusion rejects, whatever it proved before (transparency-dev mutations)', () => {
    for (const size of [1, 2, 3, 5, 8, 13, 31, 64, 100]) {
      const cases = casesOf(size)
      for (const c of cases) {
        for (const {desc, probe} of corruptInclusion(c)) {
          // A verifier that has already proven every genuine proof of the probe's tree (if any).
          const verifier = new InclusionVerifier(probe.size, probe.root)
          for (const genuine of cases) verifier.proven(genuine.index, genuine.leafHash, genuine.proof.map(hex))
          const settled = verifier.proven(
            probe.index,
            probe.leafHash,
            probe.proof.map((p) => Buffer.from(p).toString('hex')),
          )
          if (settled) expect(acceptedAlone(probe), `size ${size} index ${c.index}: ${desc}`).to.equal(true)
        }
      }
    }
  })

  it('accepts upper-case hex as verifyInclusion does, before and after the same nodes were proven lower-case', () => {
    const cases = casesOf(8)
    const upper = (c: InclusionCase) => c.proof.map((p) => hex(p).toUpperCase())
    expect(new InclusionVerifier(8, cases[0]!.root).proven(5, cases[5]!.leafHash, upper(cases[5]!))).to.equal(true)
    const verifier = new InclusionVerifier(8, cases[0]!.root)
    for (const c of cases) expect(verifier.proven(c.index, c.leafHash, c.proof.map(hex))).to.equal(true)
    // Settled by the full check instead (false), never wrongly.
    expect(verifier.proven(5, cases[5]!.leafHash, upper(cases[5]!))).to.equal(false)
    expect(acceptedAlone(cases[5]!)).to.equal(true)
  })

  it('rejects a proof element swapped in from another leaf even when both paths are proven', () => {
    const cases = casesOf(16)
    const verifier = new InclusionVerifier(16, cases[0]!.root)
    for (const c of cases) expect(verifier.proven(c.index, c.leafHash, c.proof.map(hex))).to.equal(true)
    const mixed = [...cases[3]!.proof.map(hex)]
    mixed[2] = hex(cases[12]!.proof[2]!)
    expect(verifier.proven(3, cases[3]!.leafHash, mixed)).to.equal(false)
    expect(verifier.proven(4, cases[3]!.leafHash, cases[3]!.proof.map(hex))).to.equal(false)
    expect(verifier.proven(3, cases[3]!.leafHash, [...cases[3]!.proof.map(hex), hex(cases[0]!.root)])).to.equal(false)
  })

  it('answers false, without throwing, for unusable input', () => {
    const [c] = casesOf(4)
    expect(new InclusionVerifier(0, c!.root).proven(0, c!.leafHash, [])).to.equal(false)
    expect(new InclusionVerifier(4, new Uint8Array(3)).proven(0, c!.leafHash, c!.proof.map(hex))).to.equal(false)
    const verifier = new InclusionVerifier(4, c!.root)
    expect(verifier.proven(0, c!.leafHash, [42, 'x'] as unknown[])).to.equal(false)
    expect(verifier.proven(-1, c!.leafHash, c!.proof.map(hex))).to.equal(false)
    expect(verifier.proven(0, c!.leafHash, 'nope' as unknown as unknown[])).to.equal(false)
  })
})

describe('MerkleTree.inclusionProofsHex (audit paths for an export)', () => {
  it('equals inclusionProof in hex for every leaf of trees of 1..130 leaves, at every size', () => {
    const tree = treeOf(leafDataList(130))
    for (let size = 1; size <= 130; size++) {
      const proofOf = tree.inclusionProofsHex(size)
      for (let index = 0; index < size; index++)
        expect(proofOf(index), `size ${size} index ${index}`).to.deep.equal(tree.inclusionProof(index, size).map(hex))
    }
  })

  it('equals inclusionProof for indexes asked in any order (property)', () => {
    const tree = treeOf(leafDataList(500))
    fc.assert(
      fc.property(fc.integer({min: 1, max: 500}), fc.array(fc.nat(), {maxLength: 60}), (size, picks) => {
        const proofOf = tree.inclusionProofsHex(size)
        return picks.every((p) => {
          const index = p % size
          return JSON.stringify(proofOf(index)) === JSON.stringify(tree.inclusionProof(index, size).map(hex))
        })
      }),
      {numRuns: 100},
    )
  })

  it('refuses sizes and indexes outside the tree', () => {
    const tree = treeOf(leafDataList(4))
    expect(() => tree.inclusionProofsHex(5)).to.throw(MerkleError)
    expect(() => tree.inclusionProofsHex(0)).to.throw(MerkleError)
    expect(() => tree.inclusionProofsHex(3)(3)).to.throw(MerkleError)
  })
})
