import {expect} from 'chai'
import {sha256} from '../../../src/core/crypto.js'
import {
  LEAF_PREFIX,
  MerkleError,
  NODE_PREFIX,
  emptyRoot,
  hashChildren,
  hashLeaf,
} from '../../../src/core/merkle/index.js'
import {fromHex, hex, leafData} from './fixtures.js'
import {rfc6962Leaves, rfc6962Roots} from './vectors.js'

describe('core/merkle/hasher (RFC 9162 2.1.1)', () => {
  it('uses the RFC prefixes 0x00 for leaves and 0x01 for nodes', () => {
    expect(LEAF_PREFIX).to.equal(0x00)
    expect(NODE_PREFIX).to.equal(0x01)
  })

  it('MTH({}) is SHA-256 of the empty string', () => {
    // printf '' | sha256sum
    expect(hex(emptyRoot())).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })

  it('hashes a leaf as SHA-256(0x00 || d)', () => {
    // printf '\x00' | sha256sum
    expect(hex(hashLeaf(new Uint8Array(0)))).to.equal(
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    )
    // { printf '\x00'; printf 'leaf-0' | openssl dgst -sha256 -binary; } | sha256sum
    expect(hex(hashLeaf(leafData(0)))).to.equal('3f16c0c2cd28088814f15c300b46158e83203cde690169a74602ca926fa2a8bc')
  })

  it('hashes a node as SHA-256(0x01 || left || right), in that order', () => {
    // { printf '\x01'; printf '\x00%.0s' $(seq 64); } | sha256sum
    const zero = new Uint8Array(32)
    expect(hex(hashChildren(zero, zero))).to.equal('ae0798d0ecaed2b778eddebf18f071a561c53658c05e76cedecc27cafbdbc577')
    // l0, l1 = the leaf hashes of printf 'leaf-0' / 'leaf-1' | openssl dgst -sha256 -binary (as above);
    // { printf '\x01'; cat l0.bin l1.bin; } | openssl dgst -sha256
    const l0 = fromHex('3f16c0c2cd28088814f15c300b46158e83203cde690169a74602ca926fa2a8bc')
    const l1 = fromHex('5c47f5b6a93755532767072086e2f0aa6ca762953a9848ede3c5df8281cf31f9')
    expect(hex(hashChildren(l0, l1))).to.equal('d3b4dcb90fabca433a71833cdc3f15c8827a424cf3f138675bccd1fca5b5bc76')
    expect(hex(hashChildren(l1, l0))).to.not.equal(hex(hashChildren(l0, l1)))
  })

  it('agrees with the RFC 6962 reference vectors of transparency-dev/merkle', () => {
    // roots[0] is the one-leaf tree over d_0 = "", roots[1] = node(leaf(d_0), leaf(d_1)).
    const leaves = rfc6962Leaves.map((d) => hashLeaf(fromHex(d)))
    expect(hex(leaves[0]!)).to.equal(rfc6962Roots[0])
    expect(hex(hashChildren(leaves[0]!, leaves[1]!))).to.equal(rfc6962Roots[1])
    expect(hex(hashChildren(hashChildren(leaves[0]!, leaves[1]!), leaves[2]!))).to.equal(rfc6962Roots[2])
  })

  it('separates leaves from nodes (a node is never a leaf of the same bytes)', () => {
    const left = leafData(1)
    const right = leafData(2)
    const both = Buffer.concat([left, right])
    expect(hex(hashLeaf(both))).to.not.equal(hex(hashChildren(left, right)))
    expect(hex(hashLeaf(left))).to.not.equal(hex(sha256(left)))
  })

  it('rejects children that are not 32-byte hashes with invalid_argument', () => {
    expect(() => hashChildren(new Uint8Array(31), leafData(1)))
      .to.throw(MerkleError)
      .with.property('code', 'invalid_argument')
    expect(() => hashChildren(leafData(1), new Uint8Array(33)))
      .to.throw(MerkleError)
      .with.property('code', 'invalid_argument')
  })

  it('returns fresh 32-byte Uint8Arrays that later calls do not overwrite', () => {
    const first = hashChildren(leafData(1), leafData(2))
    const firstHex = hex(first)
    hashChildren(leafData(3), leafData(4))
    hashLeaf(leafData(5))
    expect(hex(first)).to.equal(firstHex)
    expect(first).to.be.instanceOf(Uint8Array)
    expect(first.length).to.equal(32)
    expect(Object.getPrototypeOf(emptyRoot())).to.equal(Uint8Array.prototype)
  })
})
