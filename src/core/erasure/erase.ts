/**
 * Taking payload members out of an event while its hash stays true (docs/verification.md 2): the
 * value and its salt go, the commitment stays. Erasure marks the member with the erasure event's id
 * (`erased`); an export that withholds it lists it in `redacted`. Neither touches what the hash covers.
 */
import {STATEMENT_ACTION_TYPE, STATEMENT_KID_LABEL} from '../cose/statement.js'
import {PAYLOAD_MEMBERS, RESERVED_AGENT_PREFIX} from '../event/fields.js'
import type {PayloadMemberName, StoredEvent} from '../types.js'

/** The members of `wanted` an event holds a committed value of (what erasing or redacting removes). */
export function removableMembers(event: StoredEvent, wanted: readonly PayloadMemberName[]): PayloadMemberName[] {
  if (event.commitments === undefined) return []
  return PAYLOAD_MEMBERS.filter(
    (m) => wanted.includes(m) && event[m] !== undefined && event.commitments![m] !== undefined,
  )
}

/** A copy of the event without the members' values and salts. */
function withoutMembers(event: StoredEvent, members: readonly PayloadMemberName[]): StoredEvent {
  const copy: StoredEvent = {...event}
  const salts = {...event.salts}
  for (const member of members) {
    delete copy[member]
    delete salts[member]
  }
  if (Object.keys(salts).length > 0) copy.salts = salts
  else delete copy.salts
  return copy
}

/**
 * The event with `members` erased by the erasure event `erasureId`: of those, the ones it holds a
 * committed value of lose value and salt and are named in `erased`; the others are left as they are.
 */
export function eraseMembers(
  event: StoredEvent,
  members: readonly PayloadMemberName[],
  erasureId: string,
): StoredEvent {
  const removed = removableMembers(event, members)
  if (removed.length === 0) return event
  const erased = withoutMembers(event, removed)
  erased.erased = {...event.erased}
  for (const member of removed) erased.erased[member] = erasureId
  return erased
}

/**
 * The members of `wanted` an export may withhold from the event: never what verification needs
 * (docs/verification.md 11): nothing of a service event (erasure and key events are read by the
 * checks of sections 8 and 10), and not the `metadata` of a signed statement that names its
 * signer there only (events recorded before the kid label).
 */
function redactableMembers(event: StoredEvent, wanted: readonly PayloadMemberName[]): PayloadMemberName[] {
  if (event.agent_id.startsWith(RESERVED_AGENT_PREFIX)) return []
  const signerInMetadata =
    event.action_type === STATEMENT_ACTION_TYPE && typeof event.labels?.[STATEMENT_KID_LABEL] !== 'string'
  return removableMembers(event, wanted).filter((member) => !(signerInMetadata && member === 'metadata'))
}

/** The event as a redacted export shows it: `members` withheld and listed in `redacted` (selective disclosure). */
export function redactEvent(event: StoredEvent, members: readonly PayloadMemberName[]): StoredEvent {
  const removed = redactableMembers(event, members)
  if (removed.length === 0) return event
  const redacted = withoutMembers(event, removed)
  redacted.redacted = removed
  return redacted
}
