import {expect} from 'chai'
import fc from 'fast-check'
import {MerkleError, computeRoot} from '../../../src/core/merkle/index.js'
import {hex, leafData, leafDataList, treeOf} from './fixtures.js'
import {referenceRoot} from './reference.js'

describe('core/merkle/root computeRoot', () => {
  it('is MTH({}) for no leaves', () => {
    // printf '' | sha256sum
    expect(hex(computeRoot([]))).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })

  it('has the openssl-computed root of five leaves (see tree.test.ts for the commands)', () => {
    expect(hex(computeRoot(leafDataList(5)))).to.equal(
      '2547bc21863a7989f484cf2be15bf376a8a726f31381ebece03a8431603f5a5d',
    )
  })

  it('equals the naive RFC reference for every size up to 70', () => {
    const leaves = leafDataList(70)
    for (let n = 0; n <= 70; n++) {
      expect(hex(computeRoot(leaves.slice(0, n))), `n = ${n}`).to.equal(hex(referenceRoot(leaves.slice(0, n))))
    }
  })

  it('streams any iterable once (a generator)', () => {
    function* generate(n: number): Generator<Uint8Array> {
      for (let i = 0; i < n; i++) yield leafData(i)
    }
    expect(hex(computeRoot(generate(37)))).to.equal(hex(referenceRoot(leafDataList(37))))
  })

  it('equals tree.root() after the same appends, around the level buffers growth points', () => {
    const leaves = leafDataList(2049)
    const tree = treeOf([])
    for (const [i, leaf] of leaves.entries()) {
      tree.append(leaf)
      const n = i + 1
      if ([1023, 1024, 1025, 2047, 2048, 2049].includes(n)) {
        expect(hex(computeRoot(leaves.slice(0, n))), `n = ${n}`).to.equal(hex(tree.root()))
      }
    }
  })

  it('equals tree.root() after the same appends, for random leaf lists (fast-check)', () => {
    const leafArbitrary = fc.uint8Array({minLength: 32, maxLength: 32})
    fc.assert(
      fc.property(fc.array(leafArbitrary, {maxLength: 300}), (leaves) => {
        expect(hex(computeRoot(leaves))).to.equal(hex(treeOf(leaves).root()))
      }),
      {numRuns: 100},
    )
  })

  it('changes when any leaf changes or leaves swap', () => {
    const leaves = leafDataList(9)
    const root = hex(computeRoot(leaves))
    const changed = [...leaves]
    changed[6] = leafData(100)
    expect(hex(computeRoot(changed))).to.not.equal(root)
    const swapped = [...leaves.slice(0, 2), leaves[3]!, leaves[2]!, ...leaves.slice(4)]
    expect(hex(computeRoot(swapped))).to.not.equal(root)
    expect(hex(computeRoot(leaves.slice(0, 8)))).to.not.equal(root)
  })

  it('rejects a leaf that is not 32 bytes with invalid_argument', () => {
    const bad = [leafData(0), new Uint8Array(64)]
    expect(() => computeRoot(bad))
      .to.throw(MerkleError)
      .with.property('code', 'invalid_argument')
  })
})
