/**
 * The tree over C2SP tlog-tiles hash tiles, as a database keeps them. Tile (L, N) holds, back to
 * back, the hashes of the complete subtrees of 256^L leaves numbered 256N, 256N + 1, ... (level 0:
 * the leaf hashes). A tile holds at most 256 hashes; a full one never changes, and a partial one
 * only grows, so the row of a larger tree holds the smaller tree's hashes as a prefix. Every other
 * complete subtree lies inside one tile: the node of 2^(8L + r) leaves (r < 8) is the root of
 * 2^r consecutive hashes of a level-L tile.
 */
import {MerkleError, requireIntegerInRange} from './errors.js'
import {HASH_SIZE, writePairHash} from './hasher.js'
import {NodeTree} from './node-tree.js'
import {hashesAtLevel, TILE_HEIGHT, TILE_WIDTH} from '../tiles/path.js'

/** One stored tile: its hashes back to back (1..256 of them). */
export interface TileRow {
  level: number
  index: number
  hashes: Buffer
}

/**
 * A tile with the hashes above its entries, up to the root of every complete pair, quad, ...,
 * each level hashed the first time a read needs it.
 */
export class ExpandedTile {
  /** #levels[r]: the nodes of 2^r entries each; #levels[0] is the row itself. */
  readonly #levels: Buffer[]

  constructor(hashes: Buffer) {
    if (hashes.length === 0 || hashes.length % HASH_SIZE !== 0 || hashes.length > TILE_WIDTH * HASH_SIZE) {
      throw new MerkleError('invalid_argument', 'a tile holds 1 to 256 hashes of 32 bytes')
    }
    this.#levels = [hashes]
  }

  /** How many entries (level-0 hashes) the tile holds. */
  get width(): number {
    return this.#levels[0]!.length / HASH_SIZE
  }

  /** The complete nodes of 2^r entries, back to back. Precondition: 0 <= r <= 8. */
  level(r: number): Buffer {
    while (this.#levels.length <= r) {
      const below = this.#levels[this.#levels.length - 1]!
      const nodes = Math.floor(below.length / HASH_SIZE / 2)
      const level = Buffer.alloc(nodes * HASH_SIZE)
      for (let i = 0; i < nodes; i++) writePairHash(below, 2 * i * HASH_SIZE, level, i * HASH_SIZE)
      this.#levels.push(level)
    }
    return this.#levels[r]!
  }

  /** The root of a full tile: the entry of the tile above. Precondition: width 256. */
  get root(): Buffer {
    return this.level(TILE_HEIGHT)
  }
}

export function tileKey(level: number, index: number): string {
  return `${level}/${index}`
}

/** The tiles an append to a tree of `size` leaves extends: the partial right-edge tile of each level. */
export function edgeTiles(size: number): {level: number; index: number; width: number}[] {
  const edge = []
  for (let level = 0; hashesAtLevel(size, level) > 0; level++) {
    const entries = hashesAtLevel(size, level)
    if (entries % TILE_WIDTH > 0)
      edge.push({level, index: Math.floor(entries / TILE_WIDTH), width: entries % TILE_WIDTH})
  }
  return edge
}

/**
 * The rows to write when leaves whose leaf hashes are `leafHashes` (32 bytes each, back to back)
 * are appended to the tree of `size` leaves: every tile they extend or start, and at each level
 * above, the entries of the tiles they completed. `edge` holds the rows of edgeTiles(size) (at
 * least that wide) by tileKey. Precondition: leafHashes holds whole hashes.
 */
export function appendedTiles(size: number, edge: ReadonlyMap<string, Buffer>, leafHashes: Buffer): TileRow[] {
  requireIntegerInRange('size', size, 0, Number.MAX_SAFE_INTEGER)
  if (leafHashes.length % HASH_SIZE !== 0) {
    throw new MerkleError('invalid_argument', 'leafHashes must be 32-byte hashes back to back')
  }
  const rows: TileRow[] = []
  let added = leafHashes
  for (let level = 0; added.length > 0; level++) {
    const entries = hashesAtLevel(size, level)
    let index = Math.floor(entries / TILE_WIDTH)
    const held = (entries % TILE_WIDTH) * HASH_SIZE
    const partial = held === 0 ? Buffer.alloc(0) : edge.get(tileKey(level, index))
    if (partial === undefined || partial.length < held) {
      const tile = tileKey(level, index)
      throw new MerkleError('invalid_argument', `tile ${tile} of ${held / HASH_SIZE} hashes is missing`)
    }
    const all = Buffer.concat([partial.subarray(0, held), added])
    const roots: Buffer[] = []
    for (let offset = 0; offset < all.length; offset += TILE_WIDTH * HASH_SIZE, index++) {
      const hashes = Buffer.from(all.subarray(offset, offset + TILE_WIDTH * HASH_SIZE))
      rows.push({level, index, hashes})
      if (hashes.length === TILE_WIDTH * HASH_SIZE) roots.push(new ExpandedTile(hashes).root)
    }
    added = Buffer.concat(roots)
  }
  return rows
}

/**
 * The tree of `size` leaves read from tiles that `tile` looks up (any row at least as wide as the
 * tree of `size` needs will do). A tile it lacks is recorded in `missing` and read as zeros, so
 * one pass of an operation with nothing at hand names every tile it needs (which tiles a read
 * touches depends on the sizes and indexes only); the caller fetches them and runs it again.
 */
export class TiledTree extends NodeTree {
  readonly missing = new Map<string, {level: number; index: number}>()
  readonly #size: number
  readonly #tile: (level: number, index: number, width: number) => ExpandedTile | undefined
  readonly #zero = new Uint8Array(HASH_SIZE)

  constructor(size: number, tile: (level: number, index: number, width: number) => ExpandedTile | undefined) {
    super()
    requireIntegerInRange('size', size, 0, 2 ** 31)
    this.#size = size
    this.#tile = tile
  }

  get size(): number {
    return this.#size
  }

  /**
   * The hashes of `count` consecutive complete subtrees of 2^height leaves, the first numbered
   * `start` (a C2SP tile when height is a multiple of 8). Precondition: (start + count) * 2^height <= size.
   */
  nodeHashes(height: number, start: number, count: number): Buffer {
    requireIntegerInRange('height', height, 0, 31)
    requireIntegerInRange('start', start, 0, 2 ** 31)
    requireIntegerInRange('count', count, 0, Math.floor(this.#size / 2 ** height) - start)
    const tileIndex = Math.floor(start / TILE_WIDTH)
    if (height % TILE_HEIGHT === 0 && count > 0 && Math.floor((start + count - 1) / TILE_WIDTH) === tileIndex) {
      // Entries of one tile (a C2SP tile read): one lookup, one copy; a missing tile is named below.
      const offset = start - tileIndex * TILE_WIDTH
      const tile = this.#tile(height / TILE_HEIGHT, tileIndex, offset + count)
      if (tile !== undefined && tile.width >= offset + count) {
        return Buffer.from(tile.level(0).subarray(offset * HASH_SIZE, (offset + count) * HASH_SIZE))
      }
    }
    const out = Buffer.alloc(count * HASH_SIZE)
    for (let i = 0; i < count; i++) out.set(this.storedNode(height, start + i), i * HASH_SIZE)
    return out
  }

  protected storedNode(height: number, index: number): Uint8Array {
    const level = Math.floor(height / TILE_HEIGHT)
    const r = height % TILE_HEIGHT
    const first = index * 2 ** r
    const tileIndex = Math.floor(first / TILE_WIDTH)
    // The entries this read needs the tile to hold: those up to the end of this node.
    const width = first + 2 ** r - tileIndex * TILE_WIDTH
    const tile = this.#tile(level, tileIndex, width)
    if (tile === undefined || tile.width < width) {
      this.missing.set(tileKey(level, tileIndex), {level, index: tileIndex})
      return this.#zero
    }
    const at = ((first - tileIndex * TILE_WIDTH) / 2 ** r) * HASH_SIZE
    return tile.level(r).subarray(at, at + HASH_SIZE)
  }
}
