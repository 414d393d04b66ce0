/**
 * The erasure check of stored chains (docs/verification.md 10): each erased member of a scanned
 * event must be covered by the erasure event it names, which is read from the store when first
 * met. A member that is not makes the event's content verdict `commitment_mismatch`, so chain
 * verification reports it at that event as it would a value that contradicts its commitment.
 */
import {withCommitmentFault} from '../core/chain/index.js'
import {erasureIdsOf, erasureReferenceFault} from '../core/erasure/index.js'
import type {StoredEvent} from '../core/types.js'
import type {HashedBatch} from '../store/hashed-scan.js'
import type {EventStore} from '../store/store.js'

export async function* withErasureChecks(
  store: EventStore,
  batches: AsyncIterable<HashedBatch>,
): AsyncIterable<HashedBatch> {
  const erasures = new Map<string, StoredEvent>()
  for await (const batch of batches) {
    const erased = batch.links.flatMap((link) => (link.erased === undefined ? [] : [link.erased]))
    if (erased.length === 0) {
      yield batch
      continue
    }
    const unread = [...new Set(erased.flatMap(erasureIdsOf))].filter((id) => !erasures.has(id))
    if (unread.length > 0) for (const [id, event] of await store.getEvents(unread)) erasures.set(id, event)
    const hashes = batch.hashes.map((hash, i) => {
      const event = batch.links[i]!.erased
      const fault = event === undefined ? undefined : erasureReferenceFault(event, erasures)
      return fault === undefined ? hash : withCommitmentFault(hash, fault)
    })
    yield {...batch, hashes}
  }
}
