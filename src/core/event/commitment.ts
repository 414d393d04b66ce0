/**
 * Payload commitments (docs/verification.md 2): each payload member of an event is committed in
 * its hash as `SHA-256(salt || JCS(value))`, the salt 32 random bytes, so that the value and its
 * salt can later be erased or withheld (docs/erasure.md) while the hash and every proof still
 * verify. The idea is SD-JWT's salted disclosure digests (RFC 9901 section 4.2), over RFC 8785.
 */
import {isLowerHex, saltedSha256Hex} from '../crypto.js'
import type {EventInput, PayloadMemberName, StoredEvent} from '../types.js'
import {canonicalizeValue} from './canonical.js'
import {PAYLOAD_MEMBERS, RESERVED_AGENT_PREFIX} from './fields.js'

/** A salt as docs/verification.md writes it: 32 bytes in lower-case hex. */
export const SALT_PATTERN = /^[0-9a-f]{64}$/

/** The commitment of one payload value under a salt (hex). */
export function commitmentOf(saltHex: string, value: unknown): string {
  return saltedSha256Hex(saltHex, canonicalizeValue(value))
}

/** The payload members an event carries, in PAYLOAD_MEMBERS order. */
export function payloadMembersOf(event: Partial<Record<PayloadMemberName, unknown>>): PayloadMemberName[] {
  return PAYLOAD_MEMBERS.filter((member) => event[member] !== undefined)
}

/**
 * Gives an event with payload members its `salts` (the client's, else drawn) and `commitments`,
 * in place; an event without payload gets neither (docs/verification.md 2).
 */
export function commitPayload(event: EventInput, drawSalt: () => string): void {
  const members = payloadMembersOf(event)
  if (members.length === 0) {
    delete event.salts
    return
  }
  const salts: Partial<Record<PayloadMemberName, string>> = {}
  const commitments: Partial<Record<PayloadMemberName, string>> = {}
  for (const member of members) {
    const salt = event.salts?.[member] ?? drawSalt()
    salts[member] = salt
    commitments[member] = commitmentOf(salt, event[member])
  }
  event.salts = salts
  event.commitments = commitments
}

/** Why an event's payload does not match its commitments (reason `commitment_mismatch`). */
export interface CommitmentFault {
  member: PayloadMemberName
  /** What the commitment should be, or what the event should show. */
  expected: string
  actual: string
}

/**
 * What the markers of an event (`erased`, `redacted`, `salts`) say that its members contradict
 * (docs/verification.md 2): a withheld member whose value or salt is still there (a "redacted"
 * package that leaks), a salt of an absent member (with it a guessed value can be confirmed), a
 * marker on a member the event has no commitment to, or an erased member of a service event
 * (`audit-trail:` events are never erased: docs/erasure.md).
 */
function markerFault(event: StoredEvent): CommitmentFault | undefined {
  const commitments = event.commitments ?? {}
  for (const member of PAYLOAD_MEMBERS) {
    const erasedBy = event.erased?.[member]
    const withheld = erasedBy !== undefined || event.redacted?.includes(member) === true
    const how = erasedBy !== undefined ? `erased by ${erasedBy}` : 'redacted'
    if (withheld && commitments[member] === undefined) {
      return {member, expected: 'a committed member', actual: `${how}, but never committed`}
    }
    if (withheld && erasedBy !== undefined && event.agent_id.startsWith(RESERVED_AGENT_PREFIX)) {
      return {member, expected: 'never erased (a service event)', actual: how}
    }
    if (withheld && event[member] !== undefined) return {member, expected: `absent (${how})`, actual: 'a value'}
    if (event.salts?.[member] !== undefined && event[member] === undefined) {
      return {member, expected: 'no salt (the member is absent)', actual: 'a salt'}
    }
  }
  return undefined
}

/**
 * The first payload member of a hash-version-2 event that contradicts its commitments, or
 * undefined (docs/verification.md 2): a committed member is either present with its salt and
 * recomputes, or absent and named in `erased` or `redacted`; a member present without a
 * commitment is not covered by the hash. Hash-version-1 events (no commitments) have none, and
 * can be neither erased nor redacted.
 */
export function commitmentFault(event: StoredEvent): CommitmentFault | undefined {
  const marked = event.erased !== undefined || event.redacted !== undefined
  if (event.commitments === undefined && !marked) return undefined
  const fault = markerFault(event)
  if (fault !== undefined) return fault
  const commitments = event.commitments ?? {}
  for (const member of PAYLOAD_MEMBERS) {
    const committed = commitments[member]
    const value = event[member]
    if (committed === undefined) {
      if (value !== undefined) return {member, expected: 'no value (not committed)', actual: 'a value'}
      continue
    }
    if (value === undefined) {
      if (event.erased?.[member] !== undefined || event.redacted?.includes(member)) continue
      return {member, expected: committed, actual: 'absent, neither erased nor redacted'}
    }
    const salt = event.salts?.[member]
    if (typeof salt !== 'string' || !isLowerHex(salt, 32)) {
      return {member, expected: committed, actual: 'no valid salt'}
    }
    let recomputed: string
    try {
      recomputed = commitmentOf(salt, value)
    } catch (error) {
      return {member, expected: committed, actual: `unhashable value: ${(error as Error).message}`}
    }
    if (recomputed !== committed) return {member, expected: committed, actual: recomputed}
  }
  return undefined
}
