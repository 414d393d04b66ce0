import {expect} from 'chai'
import {
  ExpandedTile,
  TiledTree,
  appendedTiles,
  edgeTiles,
  hashLeaf,
  tileKey,
  type MerkleTree,
} from '../../../src/core/merkle/index.js'
import {hex, leafDataList, treeOf} from './fixtures.js'
import {referenceConsistency, referencePath, referenceRoot} from './reference.js'

/** Tiles built by appending `leaves` in commits of the given sizes, as the database store does. */
function tilesOf(leaves: readonly Uint8Array[], commits: readonly number[]): Map<string, Buffer> {
  const rows = new Map<string, Buffer>()
  let size = 0
  for (const count of commits) {
    const edge = new Map(
      edgeTiles(size).map(({level, index}) => [tileKey(level, index), rows.get(tileKey(level, index))!]),
    )
    const hashes = Buffer.concat(leaves.slice(size, size + count).map((d) => hashLeaf(d)))
    for (const row of appendedTiles(size, edge, hashes)) rows.set(tileKey(row.level, row.index), row.hashes)
    size += count
  }
  return rows
}

/** A tiled tree of `size` leaves over `rows`, fetching what a first pass says is missing. */
function read<T>(rows: Map<string, Buffer>, size: number, op: (tree: TiledTree) => T): T {
  const held = new Map<string, ExpandedTile>()
  for (let pass = 0; pass < 2; pass++) {
    const tree = new TiledTree(size, (level, index) => held.get(tileKey(level, index)))
    const result = op(tree)
    if (tree.missing.size === 0) return result
    for (const key of tree.missing.keys()) held.set(key, new ExpandedTile(rows.get(key)!))
  }
  throw new Error('tiles still missing after fetching them')
}

function splits(total: number, seed: number): number[] {
  const commits: number[] = []
  let x = seed
  for (let left = total; left > 0;) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    const count = Math.min(left, [1, 3, 255, 256, 257, 700][x % 6]!)
    commits.push(count)
    left -= count
  }
  return commits
}

function expectSame(tiles: Map<string, Buffer>, memory: MerkleTree, sizes: number[]): void {
  for (const size of sizes) {
    expect(hex(read(tiles, size, (t) => t.rootAt(size)))).to.equal(hex(memory.rootAt(size)), `root at ${size}`)
    for (const index of [0, 1, size >> 1, size - 2, size - 1].filter((i) => i >= 0 && i < size)) {
      const proof = read(tiles, size, (t) => t.inclusionProof(index, size)).map(hex)
      expect(proof).to.deep.equal(memory.inclusionProof(index, size).map(hex), `path of ${index} in ${size}`)
    }
    for (const first of [0, 1, size >> 1, size - 1].filter((m) => m >= 0 && m <= size)) {
      const proof = read(tiles, size, (t) => t.consistencyProof(first, size)).map(hex)
      expect(proof).to.deep.equal(memory.consistencyProof(first, size).map(hex), `consistency ${first} -> ${size}`)
    }
  }
}

describe('TiledTree: the tree read from C2SP hash tiles', () => {
  it('equals the RFC 9162 reference at every size, for every leaf and every first size (small trees)', () => {
    const leaves = leafDataList(70)
    const tiles = tilesOf(leaves, [1, 5, 64])
    for (let size = 1; size <= leaves.length; size++) {
      const D = leaves.slice(0, size)
      expect(hex(read(tiles, size, (t) => t.rootAt(size)))).to.equal(hex(referenceRoot(D)))
      for (let m = 0; m < size; m++) {
        expect(read(tiles, size, (t) => t.inclusionProof(m, size)).map(hex)).to.deep.equal(referencePath(m, D).map(hex))
        expect(read(tiles, size, (t) => t.consistencyProof(m, size)).map(hex)).to.deep.equal(
          referenceConsistency(m, D).map(hex),
        )
      }
    }
  })

  for (const [total, seed] of [
    [256, 1],
    [257, 2],
    [1000, 3],
    [256 * 256 + 1, 4],
  ] as const) {
    it(`equals the in-memory tree for ${total} leaves appended in random commits`, () => {
      const leaves = leafDataList(total)
      const tiles = tilesOf(leaves, splits(total, seed))
      const memory = treeOf(leaves)
      const sizes = [1, 2, 255, 256, 257, 511, 512, 513, 65_535, 65_536, 65_537, total - 1, total].filter(
        (s) => s >= 1 && s <= total,
      )
      expectSame(tiles, memory, sizes)
    })
  }

  it("gives every leaf's audit path for an export, and the hash tiles as the in-memory tree does", () => {
    const leaves = leafDataList(1300)
    const tiles = tilesOf(leaves, [600, 1, 699])
    const memory = treeOf(leaves)
    const size = 1299
    const all = Array.from({length: size}, (_, i) => i)
    const paths = read(tiles, size, (t) => {
      const of = t.inclusionProofsHex(size)
      return all.map((i) => of(i))
    })
    const expected = memory.inclusionProofsHex(size)
    all.forEach((i) => expect(paths[i]).to.deep.equal(expected(i)))
    expect(read(tiles, size, (t) => t.nodeHashes(8, 0, 5))).to.deep.equal(memory.nodeHashes(8, 0, 5))
    expect(read(tiles, size, (t) => t.nodeHashes(0, 1024, 275))).to.deep.equal(memory.nodeHashes(0, 1024, 275))
  })

  it('names a partial tile narrower than the read needs as missing', () => {
    const leaves = leafDataList(10)
    const tiles = tilesOf(leaves, [10])
    const narrow = new ExpandedTile(tiles.get('0/0')!.subarray(0, 5 * 32))
    const tree = new TiledTree(10, () => narrow)
    tree.rootAt(10)
    expect([...tree.missing.keys()]).to.deep.equal(['0/0'])
  })
})
