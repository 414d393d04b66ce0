import {expect} from 'chai'
import fc from 'fast-check'
import {MerkleError, MerkleTree} from '../../../src/core/merkle/index.js'
import {
  blockCount,
  createBlockJob,
  hashBlock,
  hashClaimedBlocks,
  isFinished,
  stitchBlocks,
} from '../../../src/core/merkle/levels.js'
import {hex, leafDataList, treeOf} from './fixtures.js'
import {referenceRoot} from './reference.js'
import {concatLeaves, expectSameTree} from './tree-compare.js'

function expectMerkleError(fn: () => unknown, code: MerkleError['code']): void {
  expect(fn).to.throw(MerkleError).with.property('code', code)
}

const leaves = leafDataList(140)

describe('core/merkle/levels (bulk build in aligned blocks, no threads)', () => {
  it('stores at level k, node i, the RFC 9162 MTH of leaves [i*2^k, (i+1)*2^k), whatever the block size', () => {
    for (const n of [1, 2, 3, 7, 8, 9, 33, 64, 100]) {
      for (const blockSize of [1, 2, 4, 8, 64, 1024]) {
        const job = createBlockJob(concatLeaves(leaves.slice(0, n)), blockSize, false)
        hashClaimedBlocks(job)
        stitchBlocks(job)
        expect(job.levels.length, `levels of ${n}`).to.equal(Math.floor(Math.log2(n)) + 1)
        job.levels.forEach((level, k) => {
          for (let i = 0; i < Math.floor(n / 2 ** k); i++) {
            const expected = hex(referenceRoot(leaves.slice(i * 2 ** k, (i + 1) * 2 ** k)))
            expect(hex(level.subarray(i * 32, i * 32 + 32)), `n ${n}, B ${blockSize}, level ${k}, node ${i}`).to.equal(
              expected,
            )
          }
        })
      }
    }
  })

  it('gives the same tree as appending, for blocks hashed in any order and any size (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 0, max: leaves.length}),
        fc.integer({min: 0, max: 7}),
        fc.infiniteStream(fc.nat()),
        (n, logBlock, draws) => {
          const job = createBlockJob(concatLeaves(leaves.slice(0, n)), 2 ** logBlock, false)
          // A random permutation of the blocks: threads finish them in no particular order.
          const order = Array.from({length: blockCount(job)}, (_, i) => i)
          const random = draws[Symbol.iterator]()
          for (let i = order.length - 1; i > 0; i--) {
            const j = random.next().value % (i + 1)
            ;[order[i], order[j]] = [order[j]!, order[i]!]
          }
          for (const block of order) hashBlock(job, block)
          stitchBlocks(job)
          expectSameTree(MerkleTree.fromLevels(n, job.levels), treeOf(leaves.slice(0, n)))
        },
      ),
      {numRuns: 60},
    )
  })

  it('hands every block out once: the claiming loop counts, and a second loop finds nothing', () => {
    const job = createBlockJob(concatLeaves(leaves.slice(0, 100)), 8, false)
    expect(blockCount(job)).to.equal(13)
    expect(isFinished(job)).to.equal(false)
    expect(hashClaimedBlocks(job)).to.equal(13)
    expect(isFinished(job)).to.equal(true)
    expect(hashClaimedBlocks(job)).to.equal(0)
    // Each loop ends on one failed claim past the last block.
    expect(Array.from(job.progress)).to.deep.equal([15, 13])
  })

  it('puts every buffer in shared memory when asked, copying leaf data only if it is not already there', () => {
    const plain = concatLeaves(leaves.slice(0, 5))
    const copied = createBlockJob(plain, 4, true)
    expect(copied.leafData.buffer).to.be.instanceOf(SharedArrayBuffer)
    expect(copied.leafData.equals(plain)).to.equal(true)
    expect(copied.progress.buffer).to.be.instanceOf(SharedArrayBuffer)
    copied.levels.forEach((level) => expect(level.buffer).to.be.instanceOf(SharedArrayBuffer))
    const adopted = createBlockJob(copied.leafData, 4, true)
    expect(adopted.leafData.buffer).to.equal(copied.leafData.buffer)
    const local = createBlockJob(plain, 4, false)
    expect(local.leafData.buffer).to.equal(plain.buffer)
    expect(local.levels[0]!.buffer).to.not.be.instanceOf(SharedArrayBuffer)
  })

  it('allocates each level with the capacity append() would have grown it to (1,024 nodes, doubling)', () => {
    const job = createBlockJob(concatLeaves(leafDataList(1025)), 64, false)
    expect(job.levels.map((level) => level.length / 32)).to.deep.equal([
      2048, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024,
    ])
  })

  it('rejects leaf data that is not whole 32-byte leaves, and block sizes that are not powers of two', () => {
    expectMerkleError(() => createBlockJob(new Uint8Array(33), 4, false), 'invalid_argument')
    expectMerkleError(() => createBlockJob('x'.repeat(32) as unknown as Uint8Array, 4, false), 'invalid_argument')
    expectMerkleError(() => createBlockJob(new Uint8Array(64), 6, false), 'invalid_argument')
    expectMerkleError(() => createBlockJob(new Uint8Array(64), 0, false), 'invalid_argument')
  })
})

describe('core/merkle/tree MerkleTree.fromLevels', () => {
  function levelsOf(n: number): Buffer[] {
    const job = createBlockJob(concatLeaves(leaves.slice(0, n)), 16, false)
    hashClaimedBlocks(job)
    stitchBlocks(job)
    return job.levels
  }

  it('keeps appending after adopted levels exactly like a tree built by append, across buffer growth', () => {
    const all = leafDataList(1100)
    for (const n of [0, 1, 5, 64, 1023, 1024]) {
      const job = createBlockJob(concatLeaves(all.slice(0, n)), 32, false)
      hashClaimedBlocks(job)
      stitchBlocks(job)
      const bulk = MerkleTree.fromLevels(n, job.levels)
      const appended = treeOf(all.slice(0, n))
      for (let size = n + 1; size <= Math.min(all.length, n + 80); size++) {
        bulk.append(all[size - 1]!)
        appended.append(all[size - 1]!)
        expect(hex(bulk.root()), `${n} + ${size - n}`).to.equal(hex(appended.root()))
      }
      expectSameTree(bulk, appended)
    }
  })

  it('rejects a level count, a short level, a non-Buffer or a size that does not fit', () => {
    const levels = levelsOf(9)
    expectMerkleError(() => MerkleTree.fromLevels(9, levels.slice(0, 3)), 'invalid_argument')
    expectMerkleError(() => MerkleTree.fromLevels(7, levels), 'invalid_argument')
    expectMerkleError(
      () => MerkleTree.fromLevels(9, [levels[0]!.subarray(0, 8 * 32), ...levels.slice(1)]),
      'invalid_argument',
    )
    expectMerkleError(
      () => MerkleTree.fromLevels(9, [new Uint8Array(levels[0]!) as Buffer, ...levels.slice(1)]),
      'invalid_argument',
    )
    expectMerkleError(() => MerkleTree.fromLevels(-1, []), 'invalid_argument')
    expectMerkleError(() => MerkleTree.fromLevels(2 ** 27 + 1, []), 'invalid_argument')
    expect(MerkleTree.fromLevels(9, levels).size).to.equal(9)
    expect(MerkleTree.fromLevels(0, []).size).to.equal(0)
  })
})
