/**
 * Sequencing (docs/api.md): gives validated events their agent's next `sequence` and
 * `prev_hash`, the log's next `index`, and their `hash`; answers a retry of an existing `id` with
 * the stored event (200) or a conflict (409). Pure: a store calls it under its write lock with
 * the heads and the existing events it read there, so that any number of writers share one log.
 */
import {AuditError} from '../errors.js'
import {SignatureChecker, signatureFault} from '../signature/event-signature.js'
import {KEYS_AGENT} from '../signature/key-events.js'
import {keyEventConflict, type KeyTimeline} from '../signature/key-timeline.js'
import {GENESIS_HASH, type AgentHead, type StoredEvent, type ValidatedEvent} from '../types.js'
import {computeEventHash, sameSentFields} from './hash.js'
import {RESERVED_AGENT_PREFIX} from './validate.js'

/** The events of one request, recorded together, all received at `recordedAt` (ISO time). */
export interface SequenceRequest {
  items: ValidatedEvent[]
  recordedAt: string
}

export type SequenceOutcome = {status: 201 | 200; event: StoredEvent} | {status: 400 | 409; error: AuditError}

/** What the store read under its lock before sequencing. */
export interface LogState {
  /** The next global index (the number of events). */
  nextIndex: number
  /** The recorded heads of (at least) the agents of the requests. */
  heads: ReadonlyMap<string, AgentHead>
  /** The stored events whose ids are among requestedIds(requests). */
  existing: ReadonlyMap<string, StoredEvent>
  /** The agents' keys as of the lock: every key event below `nextIndex` (docs/signatures.md). */
  keys: KeyTimeline
}

export interface SequenceResult {
  /** One outcome per item, per request, in request order. */
  outcomes: SequenceOutcome[][]
  /** The new events in index order: what the store must write. */
  recorded: StoredEvent[]
  /** The heads of the agents that gained events. */
  heads: Map<string, AgentHead>
}

/** The ids a client sent: only those can be retries of a stored event (2.4). */
export function requestedIds(requests: readonly SequenceRequest[]): string[] {
  const ids: string[] = []
  for (const request of requests) {
    for (const item of request.items) if (item.sent.includes('id')) ids.push(item.event.id)
  }
  return ids
}

/** The agents whose heads sequencing reads; always `audit-trail:keys`, whose head says whether `keys` is current. */
export function requestedAgents(requests: readonly SequenceRequest[]): string[] {
  const agents = new Set<string>([KEYS_AGENT])
  for (const request of requests) for (const item of request.items) agents.add(item.event.agent_id)
  return [...agents]
}

/** Sequences the requests in order after `state`; an id seen earlier in the same call is a retry of it. */
export function sequenceEvents(requests: readonly SequenceRequest[], state: LogState): SequenceResult {
  const existing = new Map(state.existing)
  const heads = new Map<string, AgentHead>()
  const recorded: StoredEvent[] = []
  let nextIndex = state.nextIndex
  // Forked when this call records a key event, which later events of the call must see.
  let keys = state.keys
  let checker: SignatureChecker | undefined
  const outcomes = requests.map((request) =>
    request.items.map((item): SequenceOutcome => {
      const prior = existing.get(item.event.id)
      if (prior) {
        if (sameSentFields(item, prior)) return {status: 200, event: prior}
        return {
          status: 409,
          error: new AuditError('conflict', `an event with id ${item.event.id} already exists with different content`),
        }
      }
      if (!item.event.agent_id.startsWith(RESERVED_AGENT_PREFIX)) {
        // The key state at this event's index, under the store's lock (docs/signatures.md): a
        // revocation recorded before the event wins, whichever writer recorded it.
        let content = item.signatureCheck
        if (content === undefined || content?.unchecked) {
          checker ??= new SignatureChecker((kid) => keys.owner(kid)?.jwk)
          content = checker.check(item.event)
        }
        const fault = signatureFault(item.event.agent_id, nextIndex, content, keys)
        if (fault) {
          const details = [{field: 'signature', message: fault.message}]
          return {status: 400, error: new AuditError('invalid_signature', fault.message, {details})}
        }
      } else if (item.event.agent_id === KEYS_AGENT) {
        const conflict = keyEventConflict(item.event, keys)
        if (conflict !== undefined) return {status: 409, error: new AuditError('conflict', conflict)}
      }
      const head = heads.get(item.event.agent_id) ?? state.heads.get(item.event.agent_id)
      // One copy, completed in place: a spread with members after it costs several times more.
      const event = Object.assign({}, item.event) as StoredEvent
      event.sequence = head ? head.last_sequence + 1 : 1
      event.prev_hash = head ? head.head_hash : GENESIS_HASH
      event.recorded_at = request.recordedAt
      event.hash = computeEventHash(event)
      event.index = nextIndex++
      heads.set(event.agent_id, {agent_id: event.agent_id, last_sequence: event.sequence, head_hash: event.hash})
      existing.set(event.id, event)
      recorded.push(event)
      if (event.agent_id === KEYS_AGENT) {
        if (keys === state.keys) keys = keys.fork()
        keys.apply(event)
      }
      return {status: 201, event}
    }),
  )
  return {outcomes, recorded, heads}
}
