/** Builds valid logs of stored events, hashed independently with the canonicalize package. */
import canonicalize from 'canonicalize'
import {sha256Hex} from '../../../src/core/crypto.js'
import {GENESIS_HASH, type HashedContent, type StoredEvent} from '../../../src/core/types.js'

/** docs/verification.md 2-3 spelled out with the reference package, not with the code under test. */
export function referenceHash(content: HashedContent): string {
  const {hash: _hash, index: _index, ...rest} = content as HashedContent & {hash?: string; index?: number}
  return sha256Hex(canonicalize(rest) as string)
}

export function makeContent(agentId: string, n: number): Omit<HashedContent, 'sequence' | 'prev_hash'> {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    agent_id: agentId,
    action_type: 'TOOL_CALL',
    action_name: `step-${n}`,
    action_status: n % 3 === 0 ? 'failure' : 'success',
    timestamp: new Date(Date.UTC(2026, 10, 21, 22, 45, n)).toISOString(),
    labels: n % 2 === 0 ? {env: 'prod'} : {},
    input: {n},
    recorded_at: new Date(Date.UTC(2026, 10, 21, 22, 46, n)).toISOString(),
  }
}

/**
 * A valid log: `agentIds[i]` is the agent of the event with index i. Each agent's events get
 * sequence 1, 2, ... and are linked to the agent's previous event, as the service would store them.
 */
export function buildLog(agentIds: readonly string[]): StoredEvent[] {
  const heads = new Map<string, {sequence: number; hash: string}>()
  return agentIds.map((agentId, index) => {
    const head = heads.get(agentId) ?? {sequence: 0, hash: GENESIS_HASH}
    const content: HashedContent = {...makeContent(agentId, index), sequence: head.sequence + 1, prev_hash: head.hash}
    const hash = referenceHash(content)
    heads.set(agentId, {sequence: content.sequence, hash})
    return {...content, hash, index}
  })
}

/** Recomputes an event's hash after an edit, as a tamperer covering their tracks would. */
export function rehash(event: StoredEvent): StoredEvent {
  return {...event, hash: referenceHash(event)}
}
