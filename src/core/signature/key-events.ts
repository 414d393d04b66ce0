/**
 * The events that give agents' keys their lifetime in the log (docs/signatures.md): the service
 * records `KEY_REGISTERED` and `KEY_REVOKED` under its own agent `audit-trail:keys`, the agent and
 * the JWK in `metadata`. The agent, the kid and the JWK's thumbprint input are also labels, which
 * the hash covers and no erasure removes, so a key's lifetime survives whatever happens to the payload.
 */
import {RESERVED_AGENT_PREFIX} from '../event/validate.js'
import type {EventInput} from '../types.js'
import {jwkThumbprint, parsePublicJwk, thumbprintInput, type SigningJwk} from '../jws/jwk.js'

export const KEYS_AGENT = `${RESERVED_AGENT_PREFIX}keys`
export const KEY_REGISTERED = 'KEY_REGISTERED'
export const KEY_REVOKED = 'KEY_REVOKED'

export type KeyEventKind = typeof KEY_REGISTERED | typeof KEY_REVOKED

/**
 * The body the service records for a registration or a revocation of the key `kid` (its JWK's
 * thumbprint). A revocation of a key whose JWK the log no longer holds names the kid alone.
 */
export function keyEventBody(
  kind: KeyEventKind,
  agentId: string,
  kid: string,
  jwk: SigningJwk | undefined,
): Record<string, unknown> {
  return {
    agent_id: KEYS_AGENT,
    action_type: kind,
    action_name: kind === KEY_REGISTERED ? 'key.register' : 'key.revoke',
    labels: {agent_id: agentId, kid, ...(jwk && {jwk: thumbprintInput(jwk)})},
    metadata: {agent_id: agentId, kid, ...(jwk && {jwk})},
  }
}

/** What a key event says, read from its labels (which outlive an erased payload). */
export interface KeyEventFacts {
  kind: KeyEventKind
  agentId: string
  kid: string
  /** Undefined when neither the label nor the metadata gives a JWK whose thumbprint is the kid. */
  jwk: SigningJwk | undefined
}

function jwkFrom(text: unknown, metadata: unknown, kid: string): SigningJwk | undefined {
  const candidates = [typeof text === 'string' ? safeParse(text) : undefined, (metadata as {jwk?: unknown})?.jwk]
  for (const candidate of candidates) {
    try {
      const jwk = parsePublicJwk(candidate)
      if (jwkThumbprint(jwk) === kid) return jwk
    } catch {
      // Not a key: try the other copy.
    }
  }
  return undefined
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The facts of a key event of `audit-trail:keys`, or undefined for any other event. */
export function keyEventFacts(
  event: Pick<EventInput, 'agent_id' | 'action_type' | 'labels' | 'metadata'>,
): KeyEventFacts | undefined {
  if (event.agent_id !== KEYS_AGENT) return undefined
  if (event.action_type !== KEY_REGISTERED && event.action_type !== KEY_REVOKED) return undefined
  const labels = event.labels as Record<string, unknown> | undefined
  const agentId = labels?.agent_id
  const kid = labels?.kid
  if (typeof agentId !== 'string' || typeof kid !== 'string') return undefined
  return {kind: event.action_type, agentId, kid, jwk: jwkFrom(labels?.jwk, event.metadata, kid)}
}
