/**
 * The package's `erasures` (docs/verification.md 10): the erasure events its events name, each with
 * its inclusion proof, so that an erased member is shown to have been erased by a recorded erasure
 * that covers it, even when the erasure's own chain is not in the package. Each entry is checked
 * like an event of the package: its content from its hash, its proof against the package root.
 */
import {intentOf} from '../erasure/index.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import type {StoredEvent} from '../types.js'
import {checkProvenEntry, isObject} from './entries.js'
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

/** Whether an event's `erased` and `redacted` have their documented shapes (before any check reads them). */
export function markedShapeProblem(event: StoredEvent): string | undefined {
  const members: readonly unknown[] = PAYLOAD_MEMBERS
  const {erased, redacted} = event as {erased?: unknown; redacted?: unknown}
  if (erased !== undefined) {
    const ok =
      isObject(erased) && Object.entries(erased).every(([m, id]) => members.includes(m) && typeof id === 'string')
    if (!ok) return 'erased must map payload members to erasure event ids'
  }
  if (redacted !== undefined) {
    const ok = Array.isArray(redacted) && redacted.every((m) => members.includes(m))
    if (!ok) return 'redacted must be a list of payload members'
  }
  return undefined
}
