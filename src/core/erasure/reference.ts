/**
 * An erased member must name the erasure that took it (docs/verification.md 10): an event of
 * `audit-trail:erasures`, later in the log, whose coverage includes that member of that event.
 * Anything else is `commitment_mismatch`: a value removed without a recorded erasure is a value
 * removed by someone who did not ask the log.
 */
import type {CommitmentFault} from '../event/commitment.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import type {StoredEvent} from '../types.js'
import {covers, intentOf} from './intent.js'

/** The erasure ids an event names, each once. */
export function erasureIdsOf(event: Pick<StoredEvent, 'erased'>): string[] {
  return event.erased === undefined ? [] : [...new Set(Object.values(event.erased))]
}

/**
 * The first erased member of `event` whose erasure `erasures` does not hold, or holds but that does
 * not cover it; undefined when every one is accounted for.
 */
export function erasureReferenceFault(
  event: StoredEvent,
  erasures: ReadonlyMap<string, StoredEvent>,
): CommitmentFault | undefined {
  for (const member of PAYLOAD_MEMBERS) {
    const id = event.erased?.[member]
    if (id === undefined) continue
    const erasure = erasures.get(id)
    if (erasure === undefined) return {member, expected: `an erasure event ${id}`, actual: 'no such erasure event'}
    const intent = intentOf(erasure)
    if (intent === undefined) return {member, expected: `an erasure event ${id}`, actual: 'not an erasure event'}
    if (erasure.index <= event.index || !covers(intent, event, member)) {
      return {member, expected: `erased by ${id}`, actual: `erasure ${id} does not cover ${member} of this event`}
    }
  }
  return undefined
}
