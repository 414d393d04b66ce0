/** Key events and signed events built as the service stores them, for the signature tests. */
import {jwkThumbprint, type SigningJwk} from '../../../src/core/jws/jwk.js'
import {validateEvent} from '../../../src/core/event/index.js'
import {keyEventBody, KEY_REGISTERED, KEY_REVOKED} from '../../../src/core/signature/index.js'
import type {StoredEvent} from '../../../src/core/types.js'

const now = new Date('2026-11-28T12:00:00.000Z')
let ids = 0
const generateId = () => `0190c000-0000-7000-8000-${(ids++).toString(16).padStart(12, '0')}`

/** A body as stored at `index` (sequence and links are not what these tests look at). */
export function stored(body: Record<string, unknown>, index: number, internal = false): StoredEvent {
  const {event} = validateEvent(body, {now, generateId, internal})
  return {...event, sequence: index + 1, prev_hash: '0'.repeat(64), recorded_at: now.toISOString(), hash: '', index}
}

export function registration(agentId: string, jwk: SigningJwk, index: number): StoredEvent {
  return stored(keyEventBody(KEY_REGISTERED, agentId, jwkThumbprint(jwk), jwk), index, true)
}

export function revocation(agentId: string, jwk: SigningJwk, index: number): StoredEvent {
  return stored(keyEventBody(KEY_REVOKED, agentId, jwkThumbprint(jwk), jwk), index, true)
}
