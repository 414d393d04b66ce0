import {expect} from 'chai'
import fc from 'fast-check'
import {MerkleTree as MerkleTreeJs} from 'merkletreejs'
import {sha256} from '../../../src/core/crypto.js'
import {MerkleError, MerkleTree, hashLeaf} from '../../../src/core/merkle/index.js'
import {hex, leafData, leafDataList, treeOf} from './fixtures.js'
import {referenceConsistency, referencePath, referenceRoot} from './reference.js'

// Leaf hashes and roots of the trees over d_i = SHA-256("leaf-<i>"), computed outside this code:
//   d()  { printf "leaf-$1" | openssl dgst -sha256 -binary; }
//   lh() { { printf '\x00'; d $1; } | openssl dgst -sha256 -binary; }        # leaf hash
//   nh() { { printf '\x01'; cat "$1" "$2"; } | openssl dgst -sha256 -binary; } # node hash
//   root2 = nh l0 l1, root3 = nh root2 l2, root4 = nh root2 (nh l2 l3), root5 = nh root4 l4
const L = [
  '3f16c0c2cd28088814f15c300b46158e83203cde690169a74602ca926fa2a8bc',
  '5c47f5b6a93755532767072086e2f0aa6ca762953a9848ede3c5df8281cf31f9',
  '4bcefc5a47a1d253b774f8f9d3ba7ab58404ec4815b4455f696259e123754115',
  'e86c052eed4821fecc19fb8d8d362c9069a7080c0179997399ecc6d40d5a27fe',
  'd2ee56c01bd726e3da82b1dfa1406d6a899bc925b6c9aac2d8675c96c4589235',
]
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', // printf '' | sha256sum
  L[0],
  'd3b4dcb90fabca433a71833cdc3f15c8827a424cf3f138675bccd1fca5b5bc76',
  '17b728310cebcc8bacd012024a708aa1a537ee01a4ce8881d2a803ebb3156d05',
  '3c83971924586eff51ef0248eb89b444439bad1cf54802638da4b099b91a8f6f',
  '2547bc21863a7989f484cf2be15bf376a8a726f31381ebece03a8431603f5a5d',
]

function expectMerkleError(fn: () => unknown, code: MerkleError['code']): void {
  let thrown: unknown
  try {
    fn()
  } catch (error) {
    thrown = error
  }
  expect(thrown, 'expected a MerkleError').to.be.instanceOf(MerkleError)
  expect((thrown as MerkleError).code).to.equal(code)
}

const MAX_EXHAUSTIVE = 70

describe('core/merkle/tree', () => {
  describe('known answers', () => {
    it('has the openssl-computed roots for 0..5 leaves, after each append and for older sizes', () => {
      const tree = new MerkleTree()
      expect(tree.size).to.equal(0)
      expect(hex(tree.root())).to.equal(ROOTS[0])
      for (let n = 1; n <= 5; n++) {
        tree.append(leafData(n - 1))
        expect(tree.size).to.equal(n)
        expect(hex(tree.root())).to.equal(ROOTS[n])
      }
      for (let n = 0; n <= 5; n++) expect(hex(tree.rootAt(n))).to.equal(ROOTS[n])
      for (let i = 0; i < 5; i++) expect(hex(tree.leafHash(i))).to.equal(L[i])
    })

    it('gives the worked-out PATH and PROOF for a five-leaf tree', () => {
      const tree = treeOf(leafDataList(5))
      // PATH(2, D[5]) = PATH(2, D[0:4]) : MTH(D[4:5]) = [l3, MTH(D[0:2]), l4]
      expect(tree.inclusionProof(2).map(hex)).to.deep.equal([L[3], ROOTS[2], L[4]])
      // PATH(4, D[5]) = [MTH(D[0:4])]; PATH(0, D[1]) = []
      expect(tree.inclusionProof(4).map(hex)).to.deep.equal([ROOTS[4]])
      expect(tree.inclusionProof(0, 1)).to.deep.equal([])
      // PROOF(3, D[5]) = SUBPROOF(3, D[0:4], true) : l4 = [l2, l3, MTH(D[0:2]), l4]
      expect(tree.consistencyProof(3).map(hex)).to.deep.equal([L[2], L[3], ROOTS[2], L[4]])
      // PROOF(4, D[5]) = [l4]: the old root is a complete subtree the verifier already has.
      expect(tree.consistencyProof(4).map(hex)).to.deep.equal([L[4]])
      expect(tree.consistencyProof(0)).to.deep.equal([])
      expect(tree.consistencyProof(5)).to.deep.equal([])
    })

    it('appendHex appends the bytes of the hex hash (either case)', () => {
      const viaBytes = treeOf([leafData(0), leafData(1), leafData(2)])
      const viaHex = new MerkleTree()
      viaHex.appendHex(hex(leafData(0)))
      viaHex.appendHex(hex(leafData(1)).toUpperCase())
      viaHex.appendHex(hex(leafData(2)))
      expect(hex(viaHex.root())).to.equal(hex(viaBytes.root()))
      expect(hex(viaHex.root())).to.equal(ROOTS[3])
    })
  })

  describe(`against the naive RFC reference, every pair up to n = ${MAX_EXHAUSTIVE}`, () => {
    const leaves = leafDataList(MAX_EXHAUSTIVE)
    const full = treeOf(leaves)

    it('root() after each append and rootAt(n) for every older n', () => {
      const tree = new MerkleTree()
      for (let n = 1; n <= MAX_EXHAUSTIVE; n++) {
        tree.append(leaves[n - 1]!)
        const expected = hex(referenceRoot(leaves.slice(0, n)))
        expect(hex(tree.root()), `root at ${n}`).to.equal(expected)
        expect(hex(full.rootAt(n)), `rootAt(${n})`).to.equal(expected)
      }
    })

    it('inclusionProof(index, size) for every 0 <= index < size, current and older sizes', () => {
      const growing = new MerkleTree()
      for (let size = 1; size <= MAX_EXHAUSTIVE; size++) {
        growing.append(leaves[size - 1]!)
        for (let index = 0; index < size; index++) {
          const expected = referencePath(index, leaves.slice(0, size)).map(hex)
          expect(full.inclusionProof(index, size).map(hex), `PATH(${index}, ${size})`).to.deep.equal(expected)
          expect(growing.inclusionProof(index).map(hex), `PATH(${index}) at ${size}`).to.deep.equal(expected)
        }
      }
    })

    it('consistencyProof(m, n) for every 0 <= m <= n, current and older sizes', () => {
      const growing = new MerkleTree()
      for (let n = 0; n <= MAX_EXHAUSTIVE; n++) {
        if (n > 0) growing.append(leaves[n - 1]!)
        for (let m = 0; m <= n; m++) {
          const expected = referenceConsistency(m, leaves.slice(0, n)).map(hex)
          expect(full.consistencyProof(m, n).map(hex), `PROOF(${m}, ${n})`).to.deep.equal(expected)
          expect(growing.consistencyProof(m).map(hex), `PROOF(${m}) at ${n}`).to.deep.equal(expected)
        }
      }
    })

    it('leafHash(i) is SHA-256(0x00 || d_i)', () => {
      leaves.forEach((leaf, i) => expect(hex(full.leafHash(i))).to.equal(hex(hashLeaf(leaf))))
    })
  })

  describe('against merkletreejs configured with the RFC 9162 prefixes', () => {
    // merkletreejs hashes sha256(concatenator([left, right])) and promotes an odd last node
    // unchanged (no duplicateOdd, no sorting), which is the RFC's power-of-two split. Leaves are
    // given pre-hashed with the 0x00 prefix; the concatenator adds the 0x01 node prefix.
    const reference = (leafHashes: Buffer[]) =>
      new MerkleTreeJs(leafHashes, (data: Buffer) => sha256(data), {
        concatenator: (parts: Buffer[]) => Buffer.concat([Buffer.from([0x01]), ...parts]),
      })

    it('has the same root and inclusion proofs for every size up to 70', () => {
      const leaves = leafDataList(MAX_EXHAUSTIVE)
      const tree = new MerkleTree()
      const leafHashes: Buffer[] = []
      for (let n = 1; n <= MAX_EXHAUSTIVE; n++) {
        tree.append(leaves[n - 1]!)
        leafHashes.push(Buffer.from(hashLeaf(leaves[n - 1]!)))
        const other = reference(leafHashes)
        expect(hex(tree.root()), `root at ${n}`).to.equal(other.getRoot().toString('hex'))
        for (let i = 0; i < n; i++) {
          const path = other.getProof(leafHashes[i]!, i).map((step: {data: Buffer}) => step.data.toString('hex'))
          expect(tree.inclusionProof(i).map(hex), `PATH(${i}, ${n})`).to.deep.equal(path)
        }
      }
    })
  })

  describe('random larger trees (fast-check)', () => {
    const LARGE = 2100 // crosses the level buffers' growth points (1024, 2048 leaves)
    const leaves = leafDataList(LARGE)
    const tree = treeOf(leaves)
    const sizeAndIndex = fc.integer({min: 1, max: LARGE}).chain((size) => fc.tuple(fc.constant(size), fc.nat(size - 1)))
    const twoSizes = fc.integer({min: 0, max: LARGE}).chain((n) => fc.tuple(fc.nat(n), fc.constant(n)))

    it('rootAt(size) equals MTH of the first size leaves', () => {
      fc.assert(
        fc.property(fc.integer({min: 0, max: LARGE}), (size) => {
          expect(hex(tree.rootAt(size))).to.equal(hex(referenceRoot(leaves.slice(0, size))))
        }),
        {numRuns: 30},
      )
    })

    it('inclusionProof(index, size) equals PATH(index, D[0:size])', () => {
      fc.assert(
        fc.property(sizeAndIndex, ([size, index]) => {
          const expected = referencePath(index, leaves.slice(0, size)).map(hex)
          expect(tree.inclusionProof(index, size).map(hex)).to.deep.equal(expected)
        }),
        {numRuns: 30},
      )
    })

    it('consistencyProof(m, n) equals PROOF(m, D[0:n])', () => {
      fc.assert(
        fc.property(twoSizes, ([m, n]) => {
          const expected = referenceConsistency(m, leaves.slice(0, n)).map(hex)
          expect(tree.consistencyProof(m, n).map(hex)).to.deep.equal(expected)
        }),
        {numRuns: 30},
      )
    })
  })

  describe('arguments and aliasing', () => {
    const tree = treeOf(leafDataList(10))

    it('rejects sizes and indices out of range or not integers with invalid_argument', () => {
      expectMerkleError(() => tree.rootAt(-1), 'invalid_argument')
      expectMerkleError(() => tree.rootAt(11), 'invalid_argument')
      expectMerkleError(() => tree.rootAt(1.5), 'invalid_argument')
      expectMerkleError(() => tree.rootAt(Number.NaN), 'invalid_argument')
      expectMerkleError(() => tree.leafHash(10), 'invalid_argument')
      expectMerkleError(() => tree.leafHash(-1), 'invalid_argument')
      expectMerkleError(() => new MerkleTree().leafHash(0), 'invalid_argument')
      expectMerkleError(() => tree.inclusionProof(10), 'invalid_argument')
      expectMerkleError(() => tree.inclusionProof(3, 3), 'invalid_argument')
      expectMerkleError(() => tree.inclusionProof(0, 11), 'invalid_argument')
      expectMerkleError(() => tree.inclusionProof(0, 0), 'invalid_argument')
      expectMerkleError(() => new MerkleTree().inclusionProof(0), 'invalid_argument')
      expectMerkleError(() => tree.consistencyProof(11), 'invalid_argument')
      expectMerkleError(() => tree.consistencyProof(5, 4), 'invalid_argument')
      expectMerkleError(() => tree.consistencyProof(0, 11), 'invalid_argument')
      expectMerkleError(() => tree.consistencyProof(-1, 5), 'invalid_argument')
    })

    it('accepts only 32-byte leaves and 64-digit hex hashes, and is unchanged by a rejected one', () => {
      const before = hex(tree.root())
      expectMerkleError(() => tree.append(new Uint8Array(31)), 'invalid_argument')
      expectMerkleError(() => tree.append(new Uint8Array(33)), 'invalid_argument')
      expectMerkleError(() => tree.appendHex('ab'.repeat(31)), 'invalid_argument')
      expectMerkleError(() => tree.appendHex('zz'.repeat(32)), 'invalid_argument')
      expectMerkleError(() => tree.appendHex(`${'ab'.repeat(32)}\n`), 'invalid_argument')
      expect(tree.size).to.equal(10)
      expect(hex(tree.root())).to.equal(before)
    })

    it('hands out copies: mutating a result changes nothing inside the tree', () => {
      const root = tree.root()
      const rootHex = hex(root)
      root.fill(0)
      tree.leafHash(3).fill(0)
      tree.inclusionProof(3).forEach((node) => node.fill(0))
      tree.consistencyProof(3).forEach((node) => node.fill(0))
      expect(hex(tree.root())).to.equal(rootHex)
      expect(hex(tree.leafHash(3))).to.equal(hex(hashLeaf(leafData(3))))
      expect(hex(tree.rootAt(10))).to.equal(rootHex)
      expect(tree.inclusionProof(3).map(hex)).to.deep.equal(referencePath(3, leafDataList(10)).map(hex))
    })
  })
})
