/**
 * Tiles of C2SP tlog-tiles v1.0.0 over the tree of docs/verification.md 5. A hash tile at level L
 * holds the hashes of consecutive complete subtrees of 256^L leaves, read from the tree view (the
 * in-memory tree, or the database's own tile rows); an entry bundle holds, per leaf, the uint16
 * length 32 and the 32-byte event hash (the leaf data d_i). A partial tile of width W exists once
 * the tree holds those W subtrees.
 */
import {hashesAtLevel, TILE_HEIGHT, TILE_WIDTH, type TileAddress} from '../core/tiles/index.js'
import type {TreeView} from './tree-view.js'
import type {EventStore} from '../store/store.js'

export async function readTile(
  services: {tree: TreeView; store: EventStore},
  tile: TileAddress,
): Promise<Buffer | undefined> {
  const {tree, store} = services
  const size = await tree.size()
  const level = tile.level === 'entries' ? 0 : tile.level
  const start = tile.index * TILE_WIDTH
  if (!Number.isSafeInteger(start) || start + tile.width > hashesAtLevel(size, level)) return undefined
  if (tile.level !== 'entries') return tree.read((t) => t.nodeHashes(TILE_HEIGHT * level, start, tile.width), size)
  const hashes = await store.eventHashes(start, start + tile.width)
  const bundle = Buffer.alloc(hashes.length * 34)
  hashes.forEach((hash, i) => {
    bundle.writeUInt16BE(32, i * 34)
    bundle.write(hash, i * 34 + 2, 32, 'hex')
  })
  return bundle
}
