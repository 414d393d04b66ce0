/**
 * Keeps the in-memory Merkle tree (the embedded store's) the log's: leaves are appended strictly by
 * index, from whichever caller has them first, so a catch-up and an ingest that race append each
 * leaf once. A store that keeps the tree itself (PostgreSQL) has no in-memory tree to keep.
 */
import type {MerkleTree} from '../core/merkle/index.js'
import type {EventStore} from '../store/store.js'

const CATCH_UP_BATCH = 100_000

/** Appends the hashes of indexes start, start+1, ... that the tree does not hold yet. */
export function appendAt(tree: MerkleTree, start: number, hashes: readonly string[]): void {
  for (let i = Math.max(0, tree.size - start); i < hashes.length && start + i === tree.size; i++)
    tree.appendHex(hashes[i]!)
}

/** Reads from the store the leaves the tree lacks, up to `upTo` (the store's count by default). */
export async function catchUpTree(tree: MerkleTree, store: EventStore, upTo?: number): Promise<void> {
  const size = upTo ?? (await store.count())
  while (tree.size < size) {
    const from = tree.size
    const hashes = await store.eventHashes(from, Math.min(size, from + CATCH_UP_BATCH))
    if (hashes.length === 0) return
    appendAt(tree, from, hashes)
  }
}
