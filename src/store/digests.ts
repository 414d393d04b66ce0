/**
 * How both stores keep an event's `salts` and `commitments` (docs/design.md, "Salts and
 * commitments on disk"): one byte naming the payload members present (bit i for PAYLOAD_MEMBERS[i])
 * followed by each member's 32 bytes in PAYLOAD_MEMBERS' order, instead of JSON text of hex. The
 * API, packages and journals keep the hex of docs/verification.md, section 2; only the row is binary.
 */
import {PAYLOAD_MEMBERS} from '../core/event/fields.js'

const DIGEST_HEX = /^[0-9a-f]{64}$/
/** The stored form as hex, which is how both stores move it through SQL: a first byte 00..0f. */
const STORED_HEX = /^0[0-9a-f](?:[0-9a-f]{64}){0,4}$/

/**
 * The stored form of a member-to-digest object, as hex; undefined when the value has another shape
 * (a member outside the four, a digest that is not 64 lower-case hex digits), which the stores then
 * keep as they did before, so that it reads back exactly as it was.
 */
export function digestsHex(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const members = value as Record<string, unknown>
  let mask = 0
  let digests = ''
  let present = 0
  for (let bit = 0; bit < PAYLOAD_MEMBERS.length; bit++) {
    const digest = members[PAYLOAD_MEMBERS[bit]!]
    if (digest === undefined) continue
    if (typeof digest !== 'string' || !DIGEST_HEX.test(digest)) return undefined
    mask |= 1 << bit
    digests += digest
    present++
  }
  if (present !== Object.keys(members).length) return undefined
  return mask.toString(16).padStart(2, '0') + digests
}

/**
 * The member-to-digest object of a stored form read as hex (members in PAYLOAD_MEMBERS' order);
 * undefined when the text is not one (a JSON text kept as it was).
 */
export function digestsOfHex(text: string): Record<string, string> | undefined {
  if (!STORED_HEX.test(text)) return undefined
  const mask = Number.parseInt(text.slice(0, 2), 16)
  const members: Record<string, string> = {}
  let at = 2
  for (let bit = 0; bit < PAYLOAD_MEMBERS.length; bit++) {
    if ((mask & (1 << bit)) === 0) continue
    members[PAYLOAD_MEMBERS[bit]!] = text.slice(at, at + 64)
    at += 64
  }
  return at === text.length ? members : undefined
}

/** The bit of a payload member in the stored form's first byte. */
export const memberBit = (member: string): number => 1 << (PAYLOAD_MEMBERS as readonly string[]).indexOf(member)
