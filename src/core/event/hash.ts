/**
 * The event hash of docs/verification.md 2: lower-case hex SHA-256 over the UTF-8 bytes of the RFC 8785
 * canonical JSON of the stored event without `hash` and `index`. Also the field comparison of an
 * idempotent retry (docs/api.md).
 */
import {sha256Hex} from '../crypto.js'
import type {HashedContent, StoredEvent, ValidatedEvent} from '../types.js'
import {canonicalizeEvent} from './canonical.js'
import {jsonEqual} from './json.js'

/** The event hash of some hashed content. A StoredEvent may be passed as is: see canonical.ts. */
export function computeEventHash(content: HashedContent): string {
  return sha256Hex(canonicalizeEvent(content))
}

/** The stored event without `hash` and `index`: what a third party canonicalises and hashes. */
export function hashedContentOf(event: StoredEvent): HashedContent {
  const {hash, index, ...content} = event
  return content
}

/**
 * docs/api.md: a retry with an existing `id` is the same event when every field the client
 * sent equals the stored one, both normalised (the sent event comes from validateEvent). Fields
 * the client left out, including defaulted ones like `timestamp`, are not compared.
 */
export function sameSentFields(sent: ValidatedEvent, stored: StoredEvent): boolean {
  const event = sent.event as unknown as Record<string, unknown>
  const record = stored as unknown as Record<string, unknown>
  return sent.sent.every((name) => jsonEqual(event[name], record[name]))
}
