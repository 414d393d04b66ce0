/**
 * The log's Merkle tree as the services read it: an in-memory MerkleTree for the embedded store
 * (rebuilt at start-up, appended to by ingest), or the hash tiles a database store writes with the
 * events (read O(log n) tiles per root or proof; nothing is held per event, nothing goes stale:
 * every process reads the tree every process wrote). docs/design.md, "The Merkle tree".
 */
import {ExpandedTile, TiledTree, tileKey, type MerkleTree, type NodeTree} from '../core/merkle/index.js'
import {TILE_WIDTH} from '../core/tiles/index.js'
import type {EventStore} from '../store/store.js'

/** The reads a service makes of one tree of a given size. */
export type TreeReads = Pick<NodeTree, 'rootAt' | 'inclusionProof' | 'consistencyProof' | 'inclusionProofsHex'> & {
  nodeHashes(height: number, start: number, count: number): Buffer
}

export interface TreeView {
  /** The number of leaves of the log's tree now. */
  size(): Promise<number>
  /**
   * Runs `op` over the tree of `size` leaves (the log's size now when left out) and gives its
   * result; `op` gets that size too and must use it. It may run more than once (the tiled view
   * runs it first to learn which tiles it reads): no side effects. Precondition: size <= size().
   */
  read<T>(op: (tree: TreeReads, size: number) => T, size?: number): Promise<T>
}

/** The embedded store's view: the in-memory tree ingest appends to. */
export function memoryTreeView(tree: MerkleTree): TreeView {
  return {
    size: async () => tree.size,
    read: async (op, size) => op(tree, size ?? tree.size),
  }
}

/** Full tiles kept between reads (about 16 KB each with the hashes above their entries). */
const CACHED_TILES = 512

/**
 * The view over a store's hash tiles. Full tiles never change, so a bounded cache of them cannot
 * go stale; a partial tile is read again whenever a read needs more of it than it holds.
 */
export class TiledTreeView implements TreeView {
  readonly #full = new Map<string, ExpandedTile>()

  constructor(private readonly store: EventStore & Required<Pick<EventStore, 'readTreeTiles'>>) {}

  size(): Promise<number> {
    return this.store.count()
  }

  async read<T>(op: (tree: TreeReads, size: number) => T, size?: number): Promise<T> {
    // The size first: the tiles, written in the same transactions, hold at least that tree.
    const treeSize = size ?? (await this.store.count())
    const held = new Map<string, ExpandedTile>()
    const lookup = (level: number, index: number): ExpandedTile | undefined => {
      const key = tileKey(level, index)
      const cached = this.#full.get(key)
      if (cached === undefined) return held.get(key)
      this.#full.delete(key)
      this.#full.set(key, cached)
      return cached
    }
    // Each pass fetches every tile the one before lacked; the second normally has them all. A
    // third would mean a tile narrower than the size read (a store that lost its tiles).
    for (let pass = 0; pass < 3; pass++) {
      const tree = new TiledTree(treeSize, lookup)
      const result = op(tree, treeSize)
      if (tree.missing.size === 0) return result
      for (const row of await this.store.readTreeTiles([...tree.missing.values()])) {
        const tile = new ExpandedTile(row.hashes)
        const key = tileKey(row.level, row.index)
        held.set(key, tile)
        if (tile.width === TILE_WIDTH) this.#remember(key, tile)
      }
    }
    throw new Error(`the stored Merkle tree tiles do not cover the tree of ${treeSize} events`)
  }

  #remember(key: string, tile: ExpandedTile): void {
    this.#full.set(key, tile)
    if (this.#full.size > CACHED_TILES) this.#full.delete(this.#full.keys().next().value!)
  }
}

/** The view a store calls for: its own tiles when it keeps them, else the in-memory tree. */
export function treeViewOf(store: EventStore, tree: MerkleTree | undefined): TreeView {
  if (store.readTreeTiles !== undefined) return new TiledTreeView(store as EventStore & Required<Pick<EventStore, 'readTreeTiles'>>)
  return memoryTreeView(tree!)
}
