/**
 * The package's `erasures` (docs/verification.md 10): the erasure events its events name, each with
 * its inclusion proof, so that an erased member is shown to have been erased by a recorded erasure
 * that covers it, even when the erasure's own chain is not in the package. Each entry is checked
 * like an event of the package: its content from its hash, its proof against the package root.
 */
import {intentOf} from '../erasure/index.js'
import type {StoredEvent} from '../types.js'
import {checkProvenEntry} from './entries.js'
import {fail} from './failures.js'
import type {EvidencePackage} from './types.js'

/** The package's erasure events by id, each checked; fails at the first that does not hold (absent: none). */
export function packageErasures(pkg: EvidencePackage): Map<string, StoredEvent> {
  const erasures = new Map<string, StoredEvent>()
  const entries: unknown = pkg.erasures ?? []
  if (!Array.isArray(entries)) fail({check: 'format', message: 'erasures must be an array'})
  for (const [i, entry] of entries.entries()) {
    const event = checkProvenEntry(pkg, 'erasures', i, entry)
    if (intentOf(event) === undefined) {
      fail({
        check: 'erasures',
        event_id: event.id,
        message: `erasures[${i}] (event ${event.id}) is not an erasure event with its metadata`,
      })
    }
    if (erasures.has(event.id))
      fail({check: 'erasures', event_id: event.id, message: `erasures[${i}] repeats erasure ${event.id}`})
    erasures.set(event.id, event)
  }
  return erasures
}
