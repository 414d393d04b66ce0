/**
 * Which keys an agent had at each point of the log (docs/signatures.md), from the key events in
 * index order. A key registered by the event at index r signs the agent's events at indexes after
 * r, up to (not including) the index of its revocation. Only the log's order decides: no clock.
 *
 * A kid names one key of one agent for good: a registration of a kid the log already knows (for
 * this agent or another, revoked or not) and a revocation of a key not registered or already
 * revoked change nothing. Sequencing refuses such key events (keyEventConflict), so they occur
 * only in a store edited by hand; every reader then still derives the same timeline.
 */
import type {EventInput, StoredEvent} from '../types.js'
import type {SigningJwk} from '../jws/jwk.js'
import {KEY_REGISTERED, keyEventFacts, KEYS_AGENT} from './key-events.js'

/** One key of one agent and its lifetime in the log. */
export interface AgentKey {
  agentId: string
  kid: string
  /** Undefined when the log no longer holds its JWK (a key event edited or erased). */
  jwk: SigningJwk | undefined
  registeredIndex: number
  registeredAt: string
  registrationId: string
  revokedIndex?: number
  revokedAt?: string
  revocationId?: string
}

export class KeyTimeline {
  readonly #byKid = new Map<string, AgentKey>()
  readonly #byAgent = new Map<string, AgentKey[]>()
  /** The sequence of the last `audit-trail:keys` event applied (0: none), for a store's catch-up. */
  sequence = 0
  /** One past the index of the last key event applied. */
  nextIndex = 0

  /** Applies the next event of `audit-trail:keys` (in index order); any other event is ignored. */
  apply(event: StoredEvent): void {
    if (event.agent_id !== KEYS_AGENT) return
    this.sequence = Math.max(this.sequence, event.sequence)
    this.nextIndex = Math.max(this.nextIndex, event.index + 1)
    const facts = keyEventFacts(event)
    if (!facts) return
    const known = this.#byKid.get(facts.kid)
    if (facts.kind === KEY_REGISTERED) {
      if (known) return
      const key: AgentKey = {
        agentId: facts.agentId,
        kid: facts.kid,
        jwk: facts.jwk,
        registeredIndex: event.index,
        registeredAt: event.recorded_at,
        registrationId: event.id,
      }
      this.#byKid.set(key.kid, key)
      const keys = this.#byAgent.get(key.agentId)
      if (keys) keys.push(key)
      else this.#byAgent.set(key.agentId, [key])
    } else if (known && known.agentId === facts.agentId && known.revokedIndex === undefined) {
      known.revokedIndex = event.index
      known.revokedAt = event.recorded_at
      known.revocationId = event.id
    }
  }

  /** The key a kid names, whoever it belongs to. */
  owner(kid: string): AgentKey | undefined {
    return this.#byKid.get(kid)
  }

  /** An agent's keys in the order they were registered. */
  keysOf(agentId: string): readonly AgentKey[] {
    return this.#byAgent.get(agentId) ?? []
  }

  /** Whether the agent had a key registered before `index` (then its events must be signed). */
  keyedBefore(agentId: string, index: number): boolean {
    const first = this.#byAgent.get(agentId)?.[0]
    return first !== undefined && first.registeredIndex < index
  }

  /** The JWKs of every key the log knows, by kid: a signature's key does not depend on when it is checked. */
  jwks(): Map<string, SigningJwk> {
    const jwks = new Map<string, SigningJwk>()
    for (const [kid, key] of this.#byKid) if (key.jwk) jwks.set(kid, key.jwk)
    return jwks
  }

  /** A copy that can go on without changing this one (sequencing a group that holds key events). */
  fork(): KeyTimeline {
    const copy = new KeyTimeline()
    for (const key of this.#byKid.values()) {
      const clone = {...key}
      copy.#byKid.set(clone.kid, clone)
      const keys = copy.#byAgent.get(clone.agentId)
      if (keys) keys.push(clone)
      else copy.#byAgent.set(clone.agentId, [clone])
    }
    copy.sequence = this.sequence
    copy.nextIndex = this.nextIndex
    return copy
  }
}

/**
 * Why `keys` would ignore a key event about to be recorded (the kid known already, a revocation of
 * a key the agent does not have), or undefined: sequencing refuses such an event (409), so that two
 * writers registering the same key at once leave one registration in the log.
 */
export function keyEventConflict(event: EventInput, keys: KeyTimeline): string | undefined {
  if (event.agent_id !== KEYS_AGENT) return undefined
  const facts = keyEventFacts(event)
  if (!facts) return `an event of ${KEYS_AGENT} must be a key event with the agent and the kid in its labels`
  const known = keys.owner(facts.kid)
  if (facts.kind === KEY_REGISTERED) {
    if (facts.jwk === undefined) return `the JWK of key ${facts.kid} is missing or is not the key of that thumbprint`
    if (known === undefined) return undefined
    if (known.agentId !== facts.agentId) return `key ${facts.kid} is registered for agent ${known.agentId}`
    if (known.revokedIndex !== undefined) return `key ${facts.kid} was revoked at index ${known.revokedIndex}`
    return `key ${facts.kid} is registered for agent ${facts.agentId} already`
  }
  if (known === undefined || known.agentId !== facts.agentId) return `agent ${facts.agentId} has no key ${facts.kid}`
  if (known.revokedIndex !== undefined) return `key ${facts.kid} was revoked at index ${known.revokedIndex} already`
  return undefined
}
