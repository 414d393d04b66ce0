/**
 * The log's Merkle tree as the services read it: an in-memory MerkleTree for the embedded store
 * (rebuilt at start-up, appended to by ingest), or the hash tiles a database store writes with the
 * events (read O(log n) tiles per root or proof; nothing is held per event, nothing goes stale:
 * every process reads the tree every process wrote). docs/design.md, "The Merkle tree".
 */
import {ExpandedTile, TiledTree, tileKey, type MerkleTree, type NodeTree} from '../core/merkle/index.js'
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
function memoryTreeView(tree: MerkleTree): TreeView {
  return {
    size: async () => tree.size,
    read: async (op, size) => op(tree, size ?? tree.size),
  }
}

/** Tiles kept between reads (at most about 16 KB each with the hashes above their entries). */
const CACHED_TILES = 512

/**
 * The view over a store's hash tiles. A full tile never changes and a partial one only grows (its
 * hashes stay a prefix of every later row), so a bounded cache of tiles cannot go stale: a read
 * that needs more of a partial tile than the cached row holds reads the tile again.
 */
class TiledTreeView implements TreeView {
  readonly #cache = new Map<string, ExpandedTile>()

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
      const cached = this.#cache.get(key)
      const fetched = held.get(key)
      if (cached === undefined || (fetched !== undefined && fetched.width > cached.width)) return fetched
      this.#cache.delete(key)
      this.#cache.set(key, cached)
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
        this.#remember(key, tile)
      }
    }
    throw new Error(`the stored Merkle tree tiles do not cover the tree of ${treeSize} events`)
  }

  #remember(key: string, tile: ExpandedTile): void {
    const cached = this.#cache.get(key)
    if (cached !== undefined && cached.width >= tile.width) return
    this.#cache.delete(key)
    this.#cache.set(key, tile)
    if (this.#cache.size > CACHED_TILES) this.#cache.delete(this.#cache.keys().next().value!)
  }
}

/** The view a store calls for: its own tiles when it keeps them, else the in-memory tree. */
export function treeViewOf(store: EventStore, tree: MerkleTree | undefined): TreeView {
  if (store.readTreeTiles !== undefined)
    return new TiledTreeView(store as EventStore & Required<Pick<EventStore, 'readTreeTiles'>>)
  return memoryTreeView(tree!)
}
