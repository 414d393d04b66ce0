import {expect} from 'chai'
import fc from 'fast-check'
import {
  MerkleError,
  MerkleTree,
  computeRoot,
  leafDataFromHex,
  leafDataFromHexChunks,
} from '../../src/core/merkle/index.js'
import {buildTree, computeRootParallel} from '../../src/threads/merkle-build.js'
import {hex, leafDataList, treeOf} from '../core/merkle/fixtures.js'
import {concatLeaves, expectSameTree} from '../core/merkle/tree-compare.js'

async function expectRejection(promise: Promise<unknown>, code: MerkleError['code']): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error, 'expected a MerkleError').to.be.instanceOf(MerkleError)
  expect((error as MerkleError).code).to.equal(code)
}

const leaves = leafDataList(4200)

describe('threads/merkle-build buildTree and computeRootParallel, core/merkle leaf data', () => {
  it('has the openssl-computed roots of 0 and 5 leaves (commands in tree.test.ts)', async () => {
    // printf '' | sha256sum
    expect(hex(await computeRootParallel(new Uint8Array(0)))).to.equal(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    )
    expect(hex((await buildTree(new Uint8Array(0))).root())).to.equal(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    )
    const five = concatLeaves(leaves.slice(0, 5))
    expect(hex(await computeRootParallel(five))).to.equal(
      '2547bc21863a7989f484cf2be15bf376a8a726f31381ebece03a8431603f5a5d',
    )
    expect(hex((await buildTree(five)).root())).to.equal(
      '2547bc21863a7989f484cf2be15bf376a8a726f31381ebece03a8431603f5a5d',
    )
  })

  it('equals the appended tree and computeRoot for 0..3 leaves and around every power of two up to 4097', async () => {
    const sizes = [0, 1, 2, 3]
    for (let p = 4; p <= 4096; p *= 2) sizes.push(p - 1, p, p + 1)
    for (const n of sizes) {
      const data = concatLeaves(leaves.slice(0, n))
      const bulk = await buildTree(data)
      expectSameTree(bulk, treeOf(leaves.slice(0, n)))
      expect(hex(await computeRootParallel(data)), `root of ${n}`).to.equal(hex(computeRoot(leaves.slice(0, n))))
    }
  })

  it('equals the appended tree for random sizes and thread counts (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({min: 0, max: leaves.length}), fc.integer({min: 1, max: 4}), async (n, threads) => {
        const bulk = await buildTree(concatLeaves(leaves.slice(0, n)), {threads})
        expectSameTree(bulk, treeOf(leaves.slice(0, n)))
      }),
      {numRuns: 25},
    )
  })

  it('reads the leaves at the view it is given (a subarray of a larger buffer)', async () => {
    const padded = concatLeaves([leaves[99]!, ...leaves.slice(0, 10), leaves[98]!])
    const view = padded.subarray(32, 32 * 11)
    expect(hex(await computeRootParallel(view))).to.equal(hex(computeRoot(leaves.slice(0, 10))))
  })

  it('keeps appending after a bulk build like a tree built by append', async () => {
    for (const n of [0, 1, 1000, 1024]) {
      const bulk = await buildTree(concatLeaves(leaves.slice(0, n)))
      const appended = treeOf(leaves.slice(0, n))
      for (let size = n + 1; size <= n + 70; size++) {
        bulk.append(leaves[size - 1]!)
        appended.append(leaves[size - 1]!)
        expect(hex(bulk.root()), `${n} + ${size - n}`).to.equal(hex(appended.root()))
      }
      expectSameTree(bulk, appended)
    }
  })

  it('leafDataFromHex decodes event hashes (either case) into shared memory, as appendHex reads them', async () => {
    // 4,200 hashes: more than one 4,096-hash decoding chunk.
    const hashes = leaves.map((leaf, i) => (i % 2 === 0 ? hex(leaf) : hex(leaf).toUpperCase()))
    const data = leafDataFromHex(hashes)
    expect(data.buffer).to.be.instanceOf(SharedArrayBuffer)
    expect(Buffer.from(data).equals(concatLeaves(leaves))).to.equal(true)
    const viaHex = new MerkleTree()
    hashes.forEach((hash) => viaHex.appendHex(hash))
    expectSameTree(await buildTree(data), viaHex)
    expect(leafDataFromHex([]).length).to.equal(0)
  })

  it('leafDataFromHexChunks decodes joined hashes as leafDataFromHex does, gives up on a malformed chunk', async () => {
    const hashes = leafDataList(10).map(hex)
    async function* chunks(...parts: {count: number; hex: string}[]) {
      yield* parts
    }
    const joined = await leafDataFromHexChunks(
      chunks({count: 3, hex: hashes.slice(0, 3).join('')}, {count: 7, hex: hashes.slice(3).join('').toUpperCase()}),
      12,
    )
    expect(Buffer.from(joined!)).to.deep.equal(Buffer.from(leafDataFromHex(hashes)))
    expect(await leafDataFromHexChunks(chunks(), 0)).to.have.length(0)
    const bad = [
      {count: 2, hex: hashes.slice(0, 3).join('')}, // count and length disagree
      {count: 2, hex: hashes[0]! + hashes[1]!.slice(0, 62) + 'zz'}, // a non-hex digit
      {count: 2, hex: ''}, // what a store gives for a chunk with a hash of another length
    ]
    for (const chunk of bad) expect(await leafDataFromHexChunks(chunks(chunk), 10), chunk.hex).to.equal(undefined)
    expect(
      await leafDataFromHexChunks(chunks({count: 3, hex: hashes.slice(0, 3).join('')}), 2),
      'over capacity',
    ).to.equal(undefined)
  })

  it('leafDataFromHex rejects what appendHex rejects: wrong length, a non-hex digit anywhere, a non-string', () => {
    const good = hex(leaves[0]!)
    for (const bad of [
      good.slice(1),
      `${good}0`,
      `${good.slice(0, 40)}g${good.slice(41)}`,
      `${good.slice(0, 63)}-`,
      `zz${good.slice(2)}`,
      7,
    ]) {
      expect(() => new MerkleTree().appendHex(bad as string), String(bad)).to.throw(MerkleError)
      expect(() => leafDataFromHex([good, bad as string]), String(bad))
        .to.throw(MerkleError)
        .with.property('code', 'invalid_argument')
    }
    // The message names the bad hash, also past the first decoding chunk.
    const many = leaves.map(hex)
    many[4150] = `${good.slice(0, 10)}x${good.slice(11)}`
    expect(() => leafDataFromHex(many)).to.throw(MerkleError, 'hash 4150 ')
  })

  it('rejects leaf data that is not whole 32-byte leaves and thread counts below 1 or fractional', async () => {
    await expectRejection(buildTree(new Uint8Array(31)), 'invalid_argument')
    await expectRejection(computeRootParallel(new Uint8Array(65)), 'invalid_argument')
    await expectRejection(buildTree(null as unknown as Uint8Array), 'invalid_argument')
    await expectRejection(buildTree(new Uint8Array(64), {threads: 0}), 'invalid_argument')
    await expectRejection(buildTree(new Uint8Array(64), {threads: 1.5}), 'invalid_argument')
  })
})
