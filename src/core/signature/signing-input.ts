/**
 * What an agent signs (docs/signatures.md): the RFC 8785 (JCS) form of the event's client part in
 * commitment form, as stored. That is the members a client sends (docs/api.md), with the defaults
 * the service applies, without `signature` and `salts`, and with the payload members replaced by
 * their `commitments` (docs/verification.md 2). A verifier rebuilds it from a stored event alone,
 * also once a payload member is erased or redacted: the signature covers the commitments, not the values.
 */
import {canonicalizeValue} from '../event/canonical.js'
import {CLIENT_FIELDS, PAYLOAD_MEMBERS} from '../event/fields.js'
import type {EventInput} from '../types.js'

const UNSIGNED: ReadonlySet<string> = new Set(['salts', 'signature', ...PAYLOAD_MEMBERS])
/** The client's members the signature covers directly, then the commitments standing in for the payload. */
export const SIGNED_FIELDS = [...CLIENT_FIELDS.filter((name) => !UNSIGNED.has(name)), 'commitments'] as const

/** The signing input of an event (validated, or stored: service members are ignored), as JCS text. */
export function signingInputOf(event: EventInput): string {
  const record = event as unknown as Record<string, unknown>
  const signed: Record<string, unknown> = {}
  for (const name of SIGNED_FIELDS) if (record[name] !== undefined) signed[name] = record[name]
  return canonicalizeValue(signed)
}
