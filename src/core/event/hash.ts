/**
 * The event hash of docs/verification.md 2: lower-case hex SHA-256 over the UTF-8 bytes of the RFC 8785
 * canonical JSON of the event's hashed form. Also the field comparison of an idempotent retry
 * (docs/api.md).
 */
import {sha256Hex} from '../crypto.js'
import type {HashedContent, PayloadMemberName, StoredEvent, ValidatedEvent} from '../types.js'
import {canonicalizeEvent} from './canonical.js'
import {PAYLOAD_MEMBERS} from './fields.js'
import {jsonEqual} from './json.js'

/** The event hash of some hashed content. A StoredEvent may be passed as is: see canonical.ts. */
export function computeEventHash(content: HashedContent): string {
  return sha256Hex(canonicalizeEvent(content))
}

/** The stored event without the members its hash never covers (`hash`, `index`, salts, erasures). */
export function hashedContentOf(event: StoredEvent): HashedContent {
  const {hash, index, salts, erased, redacted, ...content} = event
  return content
}

const isPayload = (name: string): name is PayloadMemberName => (PAYLOAD_MEMBERS as readonly string[]).includes(name)

/**
 * docs/api.md: a retry with an existing `id` is the same event when every field the client
 * sent equals the stored one, both normalised (the sent event comes from validateEvent). Fields
 * the client left out, including defaulted ones like `timestamp` and the salts the service drew,
 * are not compared; nor are payload members erased since, nor their salts.
 */
export function sameSentFields(sent: ValidatedEvent, stored: StoredEvent): boolean {
  const event = sent.event as unknown as Record<string, unknown>
  const record = stored as unknown as Record<string, unknown>
  const gone = (member: PayloadMemberName) => stored.erased?.[member] !== undefined
  return sent.sent.every((name) => {
    if (isPayload(name) && gone(name)) return true
    if (name !== 'salts') return jsonEqual(event[name], record[name])
    return PAYLOAD_MEMBERS.every(
      (member) => gone(member) || jsonEqual(sent.event.salts?.[member], stored.salts?.[member]),
    )
  })
}
