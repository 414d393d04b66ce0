/**
 * The `keys` member of an evidence package (docs/verification.md 8): every event of
 * `audit-trail:keys` recorded in its tree, each with its inclusion proof, so that `verify
 * --package` checks every signature offline with the keys the log itself recorded, and a key event
 * left out (a revocation) is a gap in that chain whatever the package's selection.
 */
import type {PackageKeyEntry} from '../core/evidence/types.js'
import {KEYS_AGENT} from '../core/signature/index.js'
import type {StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {TreeView} from './tree-view.js'

/** The key events among the first `size` events, in index order, with their proofs. */
export async function packageKeyEntries(store: EventStore, tree: TreeView, size: number): Promise<PackageKeyEntry[]> {
  const events: StoredEvent[] = []
  if (size === 0) return []
  for await (const event of store.scanEvents({filter: {agent_id: KEYS_AGENT}, toIndex: size})) events.push(event)
  if (events.length === 0) return []
  const paths = await tree.read((t) => events.map((event) => t.inclusionProofsHex(size)(event.index)), size)
  return events.map((event, i) => ({event, proof: {leaf_index: event.index, audit_path: paths[i]!}}))
}
