import {expect} from 'chai'
import fc from 'fast-check'
import {
  MerkleError,
  hashLeaf,
  rootFromInclusionProof,
  verifyConsistency,
  verifyInclusion,
} from '../../../src/core/merkle/index.js'
import {fromHex, hex, leafData, leafDataList, treeOf} from './fixtures.js'
import {
  type ConsistencyCase,
  type InclusionCase,
  corruptConsistency,
  corruptInclusion,
  emptyTreeHash,
  flipBit,
  someHash,
} from './mutations.js'
import {referenceRoot, uniformTree} from './reference.js'
import {rfc6962ConsistencyProofs, rfc6962InclusionProofs, rfc6962Leaves, rfc6962Roots} from './vectors.js'

function merkleErrorOf(fn: () => unknown): MerkleError {
  try {
    fn()
  } catch (error) {
    if (error instanceof MerkleError) return error
    throw new Error(`expected a MerkleError, got ${String(error)}`, {cause: error})
  }
  throw new Error('expected a MerkleError, nothing was thrown')
}

const verifyInclusionCase = (c: InclusionCase) => verifyInclusion(c.index, c.size, c.leafHash, c.proof, c.root)
const verifyConsistencyCase = (c: ConsistencyCase) => verifyConsistency(c.size1, c.size2, c.root1, c.root2, c.proof)

/** Every probe must throw a MerkleError; lists the ones that verified instead. */
function expectAllRejected<T>(probes: {desc: string; probe: T}[], verify: (probe: T) => void, where: string): void {
  const accepted = probes.filter(({probe}) => {
    try {
      verify(probe)
      return true
    } catch (error) {
      if (!(error instanceof MerkleError)) throw error
      return false
    }
  })
  expect(
    accepted.map((p) => p.desc),
    `accepted corruptions of ${where}`,
  ).to.deep.equal([])
}

// Every pair of sizes verifies up to MAX_VERIFIED; the full corruption set (about 25 probes per
// proof) runs up to MAX_MUTATED, and fast-check covers larger sizes with random single-bit flips.
const MAX_VERIFIED = 70
const MAX_MUTATED = 24

describe('core/merkle/proof', () => {
  describe('RFC 6962 vectors of transparency-dev/merkle', () => {
    const leafHashes = rfc6962Leaves.map((d) => hashLeaf(fromHex(d)))
    const roots = rfc6962Roots.map(fromHex)

    it('the naive reference reproduces their roots (so it can be trusted as an oracle)', () => {
      const leaves = rfc6962Leaves.map(fromHex)
      rfc6962Roots.forEach((root, i) => expect(hex(referenceRoot(leaves.slice(0, i + 1)))).to.equal(root))
    })

    for (const vector of rfc6962InclusionProofs) {
      it(`inclusion of leaf ${vector.index} in ${vector.size}: verifies, every corruption is rejected`, () => {
        const c: InclusionCase = {
          index: vector.index,
          size: vector.size,
          leafHash: leafHashes[vector.index]!,
          proof: vector.proof.map(fromHex),
          root: roots[vector.size - 1]!,
        }
        expect(hex(rootFromInclusionProof(c.index, c.size, c.leafHash, c.proof))).to.equal(hex(c.root))
        verifyInclusionCase(c)
        expectAllRejected(corruptInclusion(c), verifyInclusionCase, 'the vector')
      })
    }

    for (const vector of rfc6962ConsistencyProofs) {
      it(`consistency ${vector.size1} -> ${vector.size2}: verifies, every corruption is rejected`, () => {
        const c: ConsistencyCase = {
          size1: vector.size1,
          size2: vector.size2,
          root1: roots[vector.size1 - 1]!,
          root2: roots[vector.size2 - 1]!,
          proof: vector.proof.map(fromHex),
        }
        verifyConsistencyCase(c)
        if (c.size1 < c.size2) expectAllRejected(corruptConsistency(c), verifyConsistencyCase, 'the vector')
      })
    }
  })

  describe('edge cases (after transparency-dev TestVerifyConsistency / TestVerifyInclusion)', () => {
    const r1 = leafData(1)
    const r2 = leafData(2)
    const cases: [string, () => void, MerkleError['code'] | null][] = [
      ['0 -> 0 with the empty root', () => verifyConsistency(0, 0, emptyTreeHash, emptyTreeHash, []), null],
      ['0 -> 1 with any second root', () => verifyConsistency(0, 1, emptyTreeHash, r2, []), null],
      ['1 -> 1 with equal roots', () => verifyConsistency(1, 1, r2, r2, []), null],
      ['1 -> 1 with different roots', () => verifyConsistency(1, 1, r1, r2, []), 'root_mismatch'],
      // Stricter than transparency-dev, which accepts any root1 for size1 = 0.
      ['0 -> 1 whose root1 is not MTH({})', () => verifyConsistency(0, 1, r1, r2, []), 'root_mismatch'],
      ['0 -> 0 whose roots are not MTH({})', () => verifyConsistency(0, 0, r1, r1, []), 'root_mismatch'],
      ['time travel 1 -> 0', () => verifyConsistency(1, 0, r1, r2, []), 'invalid_argument'],
      ['time travel 2 -> 1', () => verifyConsistency(2, 1, r1, r2, []), 'invalid_argument'],
      ['empty proof for 1 -> 2', () => verifyConsistency(1, 2, r1, r2, []), 'invalid_proof'],
      [
        'non-empty proof for 0 -> 0',
        () => verifyConsistency(0, 0, emptyTreeHash, emptyTreeHash, [emptyTreeHash]),
        'invalid_proof',
      ],
      [
        'non-empty proof for 0 -> 1',
        () => verifyConsistency(0, 1, emptyTreeHash, r2, [emptyTreeHash]),
        'invalid_proof',
      ],
      ['non-empty proof for 1 -> 1', () => verifyConsistency(1, 1, r2, r2, [emptyTreeHash]), 'invalid_proof'],
      [
        'a root that is not 32 bytes',
        () => verifyConsistency(1, 1, Buffer.from('WrongRoot'), r2, []),
        'invalid_argument',
      ],
      ['a size that is not an integer', () => verifyConsistency(1.5, 2, r1, r2, [r1]), 'invalid_argument'],
      ['one-leaf inclusion: root = leaf hash, empty proof', () => verifyInclusion(0, 1, r1, [], r1), null],
      ['one-leaf inclusion with another root', () => verifyInclusion(0, 1, r1, [], r2), 'root_mismatch'],
      ['inclusion with an empty leaf hash', () => verifyInclusion(0, 1, new Uint8Array(0), [], r1), 'invalid_argument'],
      ['inclusion with an empty root', () => verifyInclusion(0, 1, r1, [], new Uint8Array(0)), 'invalid_argument'],
      ['inclusion of index 0 in size 0', () => verifyInclusion(0, 0, someHash, [], emptyTreeHash), 'invalid_argument'],
      ['inclusion of index 1 in size 0', () => verifyInclusion(1, 0, someHash, [], emptyTreeHash), 'invalid_argument'],
      ['inclusion of index 2 in size 1', () => verifyInclusion(2, 1, someHash, [], emptyTreeHash), 'invalid_argument'],
      ['inclusion of index -1', () => verifyInclusion(-1, 4, someHash, [], emptyTreeHash), 'invalid_argument'],
      [
        'inclusion in a size above 2^53',
        () => verifyInclusion(0, 2 ** 53, someHash, [], emptyTreeHash),
        'invalid_argument',
      ],
      [
        'rootFromInclusionProof with a proof element of 31 bytes',
        () => rootFromInclusionProof(0, 2, r1, [new Uint8Array(31)]),
        'invalid_proof',
      ],
      [
        'rootFromInclusionProof with a proof one too long',
        () => rootFromInclusionProof(0, 2, r1, [r1, r2]),
        'invalid_proof',
      ],
      [
        'rootFromInclusionProof with an empty proof for size 2',
        () => rootFromInclusionProof(1, 2, r1, []),
        'invalid_proof',
      ],
    ]
    for (const [desc, run, code] of cases) {
      it(`${desc}: ${code ?? 'passes'}`, () => {
        if (code === null) run()
        else expect(merkleErrorOf(run).code).to.equal(code)
      })
    }

    it('a root mismatch carries both roots as hex and names what failed', () => {
      const tree = treeOf(leafDataList(6))
      const error = merkleErrorOf(() => verifyInclusion(2, 6, tree.leafHash(2), tree.inclusionProof(2), someHash))
      expect(error.code).to.equal('root_mismatch')
      expect(error.expected).to.equal(hex(someHash))
      expect(error.actual).to.equal(hex(tree.root()))
      const second = merkleErrorOf(() => verifyConsistency(3, 6, tree.rootAt(3), someHash, tree.consistencyProof(3)))
      expect([second.code, second.expected, second.actual]).to.deep.equal([
        'root_mismatch',
        hex(someHash),
        hex(tree.root()),
      ])
      expect(second.message).to.contain('root2')
      const first = merkleErrorOf(() => verifyConsistency(3, 6, someHash, tree.root(), tree.consistencyProof(3)))
      expect([first.expected, first.actual]).to.deep.equal([hex(someHash), hex(tree.rootAt(3))])
      expect(first.message).to.contain('root1')
    })

    it('binds the root, not the size: a proof for (0, 4) also computes root4 as if for size 3', () => {
      // RFC 9162 2.1.3.2 walks the same left/right sequence for both sizes here, so a verifier
      // must take the size and the root from the same tree head (as every caller in this project
      // does); this documents the limit of what the size-1 mutation can catch.
      const tree = treeOf(leafDataList(4))
      expect(hex(rootFromInclusionProof(0, 3, tree.leafHash(0), tree.inclusionProof(0)))).to.equal(hex(tree.root()))
    })
  })

  describe('proofs of MerkleTree, every pair of sizes', () => {
    const tree = treeOf(leafDataList(MAX_VERIFIED))

    it(
      `every inclusion proof up to n = ${MAX_VERIFIED} verifies; ` +
        `up to ${MAX_MUTATED} every corruption is rejected`,
      () => {
        for (let size = 1; size <= MAX_VERIFIED; size++) {
          const root = tree.rootAt(size)
          for (let index = 0; index < size; index++) {
            const c: InclusionCase = {
              index,
              size,
              leafHash: tree.leafHash(index),
              proof: tree.inclusionProof(index, size),
              root,
            }
            verifyInclusionCase(c)
            if (size <= MAX_MUTATED)
              expectAllRejected(corruptInclusion(c), verifyInclusionCase, `PATH(${index}, ${size})`)
          }
        }
      },
    )

    it(
      `every consistency proof up to n = ${MAX_VERIFIED} verifies; up to ${MAX_MUTATED} every corruption is ` +
        `rejected`,
      () => {
        for (let size2 = 0; size2 <= MAX_VERIFIED; size2++) {
          const root2 = tree.rootAt(size2)
          for (let size1 = 0; size1 <= size2; size1++) {
            const c: ConsistencyCase = {
              size1,
              size2,
              root1: tree.rootAt(size1),
              root2,
              proof: tree.consistencyProof(size1, size2),
            }
            verifyConsistencyCase(c)
            if (size1 > 0 && size1 < size2 && size2 <= MAX_MUTATED) {
              expectAllRejected(corruptConsistency(c), verifyConsistencyCase, `PROOF(${size1}, ${size2})`)
            }
          }
        }
      },
    )
  })

  describe('properties (fast-check)', () => {
    const SIZE = 1000
    const tree = treeOf(leafDataList(SIZE))
    const sizeAndIndex = fc.integer({min: 1, max: SIZE}).chain((size) => fc.tuple(fc.constant(size), fc.nat(size - 1)))
    const twoSizes = fc
      .integer({min: 1, max: SIZE})
      .chain((n) => fc.tuple(fc.integer({min: 1, max: n}), fc.constant(n)))

    it('an inclusion proof verifies, and any single-bit flip in proof, leaf or root fails', () => {
      fc.assert(
        fc.property(sizeAndIndex, fc.nat(), ([size, index], seed) => {
          const c: InclusionCase = {
            index,
            size,
            leafHash: tree.leafHash(index),
            proof: tree.inclusionProof(index, size),
            root: tree.rootAt(size),
          }
          verifyInclusionCase(c)
          // Pick one bit among all bits of the proof elements, the leaf hash and the root.
          const targets = [...c.proof.map((_, i) => `proof ${i}`), 'leaf', 'root']
          const target = targets[seed % targets.length]!
          const bit = Math.floor(seed / targets.length) % 256
          const flipped: InclusionCase =
            target === 'leaf'
              ? {...c, leafHash: flipBit(c.leafHash, bit)}
              : target === 'root'
                ? {...c, root: flipBit(c.root, bit)}
                : {...c, proof: c.proof.map((p, i) => (`proof ${i}` === target ? flipBit(p, bit) : p))}
          expect(merkleErrorOf(() => verifyInclusionCase(flipped)).code).to.equal('root_mismatch')
        }),
        {numRuns: 300},
      )
    })

    it('a consistency proof verifies, and any single-bit flip in proof or either root fails', () => {
      fc.assert(
        fc.property(twoSizes, fc.nat(), ([size1, size2], seed) => {
          const c: ConsistencyCase = {
            size1,
            size2,
            root1: tree.rootAt(size1),
            root2: tree.rootAt(size2),
            proof: tree.consistencyProof(size1, size2),
          }
          verifyConsistencyCase(c)
          const targets = [...c.proof.map((_, i) => `proof ${i}`), 'root1', 'root2']
          const target = targets[seed % targets.length]!
          const bit = Math.floor(seed / targets.length) % 256
          const flipped: ConsistencyCase =
            target === 'root1'
              ? {...c, root1: flipBit(c.root1, bit)}
              : target === 'root2'
                ? {...c, root2: flipBit(c.root2, bit)}
                : {...c, proof: c.proof.map((p, i) => (`proof ${i}` === target ? flipBit(p, bit) : p))}
          expect(merkleErrorOf(() => verifyConsistencyCase(flipped)).code).to.equal('root_mismatch')
        }),
        {numRuns: 300},
      )
    })

    it('verifies proofs for sizes up to 2^53 - 1 in exact arithmetic (uniform-leaf trees)', () => {
      const uniform = uniformTree(hashLeaf(leafData(0)))
      const bigSize = fc.integer({min: 2 ** 32 - 2, max: Number.MAX_SAFE_INTEGER})
      fc.assert(
        fc.property(
          bigSize,
          fc.double({min: 0, max: 1, noNaN: true, maxExcluded: true}),
          fc.double({min: 0, max: 1, noNaN: true, maxExcluded: true}),
          (size, a, b) => {
            const index = Math.floor(a * size)
            const leafHash = uniform.root(1)
            verifyInclusion(index, size, leafHash, uniform.path(index, size), uniform.root(size))
            const size1 = 1 + Math.floor(b * (size - 1))
            verifyConsistency(size1, size, uniform.root(size1), uniform.root(size), uniform.consistency(size1, size))
            // Every hash is needed: dropping the last (highest) proof element must fail.
            const path = uniform.path(index, size)
            expect(() => verifyInclusion(index, size, leafHash, path.slice(0, -1), uniform.root(size))).to.throw(
              MerkleError,
            )
            expect(() => verifyInclusion(index, size, leafHash, path, flipBit(uniform.root(size), 7))).to.throw(
              MerkleError,
            )
          },
        ),
        {numRuns: 100},
      )
    })
  })
})
