/**
 * Per-agent hash-chain verification (docs/verification.md 2-3 and GET /v1/verify): an agent's events,
 * in global index order, must have sequence 1, 2, 3..., the first with prev_hash = GENESIS_HASH,
 * each later one with prev_hash = the previous event's hash, and every stored hash must equal the
 * hash recomputed from the event's content.
 *
 * Order of the checks on each event, and why:
 * 1. sequence: a deleted or reordered event shows first as a sequence gap, the most precise
 *    diagnosis; checking the link first would call the same deletion a broken link.
 * 2. genesis (sequence 1) or link (later events): a prev_hash rewritten without re-hashing also
 *    breaks the event's own hash; the link names what was changed, so it is reported first.
 * 3. hash: content edited in place (hash left stale) shows here.
 * An edit that recomputes the edited event's hash shows as a broken link on the agent's next event.
 *
 * Verification stops at an agent's first failure; `events_checked` counts that agent's events up to
 * and including the failing one.
 *
 * The chains alone cannot show an agent's newest events removed, its newest event rewritten with
 * a recomputed hash, or an event added after its newest one: what is left is still a valid chain.
 * The service records each chain's head (sequence and hash) beside the events, in the same
 * transaction as every append; given the heads read at the same instant as the events fed end, a
 * chain must end exactly at its head: one that stops short of it, ends on another hash, or goes
 * past it fails, and so does an agent with events but no recorded head (see `ChainVerifier`).
 */
import {GENESIS_HASH, type AgentHead, type StoredEvent} from '../types.js'
import {commitmentFault, type CommitmentFault} from '../event/commitment.js'
import {computeEventHash} from '../event/hash.js'
import {RESERVED_AGENT_PREFIX} from '../event/validate.js'
import {SignatureChecker, signatureFault, type KeyTimeline, type SignatureContent} from '../signature/index.js'

export type ChainFailureReason =
  'hash_mismatch' | 'broken_link' | 'sequence_gap' | 'bad_genesis' | 'commitment_mismatch' | 'bad_signature'

export interface ChainValid {
  valid: true
  agent_id: string
  events_checked: number
  head_sequence: number
  head_hash: string
}

export interface ChainInvalid {
  valid: false
  agent_id: string
  events_checked: number
  first_invalid_sequence: number
  /** null when the first invalid event is missing (removed after it was recorded). */
  first_invalid_event_id: string | null
  reason: ChainFailureReason
  expected: string
  actual: string
}

export type ChainResult = ChainValid | ChainInvalid

export interface AllChainsResult {
  valid: boolean
  agents_checked: number
  events_checked: number
  invalid_agents: ChainInvalid[]
  /** Only when the global log skips an index (events removed or renumbered): the first place. */
  index_gap?: IndexGap
}

/** Indexes run 0, 1, 2... with no gap (docs/verification.md 2-3): where the log first departs from that. */
export interface IndexGap {
  expected_index: number
  actual_index: number
  event_id: string
}

interface ChainState {
  agentId: string
  eventsChecked: number
  headSequence: number
  headHash: string
  headId: string | null
  /** The first event fed past the head recorded at the time (one the service never recorded). */
  unrecordedId?: string
  failure?: ChainInvalid
}

/** What the chain rules read of an event besides its content (whose hash is given separately). */
export type ChainLink = Pick<StoredEvent, 'id' | 'agent_id' | 'sequence' | 'prev_hash' | 'hash'>

/** A link with its index: what a signature's check needs besides the signature's own verdict. */
export type IndexedChainLink = ChainLink & {index: number}

// Separates a recomputed hash from a commitment fault found with it (see recomputeHash).
const FAULT_SEPARATOR = '\u0000'

/**
 * The hash recomputed from the content, or a description when the content cannot be hashed
 * (what ChainVerifier.add compares with the stored hash; a caller may compute it elsewhere).
 * When a payload member contradicts its commitment (docs/verification.md 2), the hash is followed
 * by the fault, so that one string per event carries the whole content verdict across threads.
 */
export function recomputeHash(event: StoredEvent): string {
  let hash: string
  try {
    // A StoredEvent is hashed without copying: canonicalizeEvent ignores `hash` and `index`.
    hash = computeEventHash(event)
  } catch (error) {
    // Content RFC 8785 refuses (e.g. a non-finite number) can only come from tampering.
    return `unhashable content: ${(error as Error).message}`
  }
  const fault = commitmentFault(event)
  return fault === undefined ? hash : withCommitmentFault(hash, fault)
}

/**
 * A recomputed hash with a commitment fault found outside the event itself (an erased member whose
 * erasure event does not cover it: core/erasure/reference.ts), in recomputeHash's form.
 */
export function withCommitmentFault(recomputed: string, fault: CommitmentFault): string {
  if (recomputed.includes(FAULT_SEPARATOR)) return recomputed
  return recomputed + FAULT_SEPARATOR + JSON.stringify([`${fault.member}: ${fault.expected}`, fault.actual])
}

/** The content verdict of recomputeHash: the hash, and a commitment fault when there is one. */
export function contentFault(recomputed: string, stored: string): ChainFault | undefined {
  const at = recomputed.indexOf(FAULT_SEPARATOR)
  const hash = at < 0 ? recomputed : recomputed.slice(0, at)
  if (hash !== stored) return {reason: 'hash_mismatch', expected: hash, actual: stored}
  if (at < 0) return undefined
  const [expected, actual] = JSON.parse(recomputed.slice(at + 1)) as [string, string]
  return {reason: 'commitment_mismatch', expected, actual}
}

/** The agent's event before the one checked: sequence 0 and GENESIS_HASH before its first. */
export interface ChainPosition {
  sequence: number
  hash: string
}

export const CHAIN_START: ChainPosition = {sequence: 0, hash: GENESIS_HASH}

export interface ChainFault {
  reason: ChainFailureReason
  expected: string
  actual: string
}

/**
 * The first chain rule `event` breaks after `previous`, in the documented order (sequence, genesis
 * or link, hash, commitments), or undefined: the one verdict of the store, the API and the package verifier.
 * `recomputed` is recomputeHash of the event. With `gaps` (an evidence package filtered by content
 * holds an agent's events with sequences missing), sequences need only increase and an event is
 * linked only to a previous event of the sequence just before it.
 */
export function chainFault(
  previous: ChainPosition,
  event: ChainLink,
  recomputed: string,
  gaps = false,
): ChainFault | undefined {
  const next = previous.sequence + 1
  if (gaps ? event.sequence < next : event.sequence !== next) {
    const expected = gaps ? `> ${previous.sequence}` : String(next)
    return {reason: 'sequence_gap', expected, actual: String(event.sequence)}
  }
  if (event.sequence === 1) {
    if (event.prev_hash !== GENESIS_HASH)
      return {reason: 'bad_genesis', expected: GENESIS_HASH, actual: event.prev_hash}
  } else if (event.sequence === next && event.prev_hash !== previous.hash) {
    return {reason: 'broken_link', expected: previous.hash, actual: event.prev_hash}
  }
  return contentFault(recomputed, event.hash)
}

/**
 * The chain against the head the service recorded for it (none recorded: an empty chain), read at
 * the instant the events fed end. Shorter: the newest events were removed; the same length with
 * another hash: the newest event was rewritten and re-hashed; longer: events were added that the
 * service never recorded (expected/actual are the recorded and the found head sequence).
 */
function headFailure(state: ChainState, recorded: AgentHead | undefined): ChainInvalid | undefined {
  const base = {valid: false as const, agent_id: state.agentId, events_checked: state.eventsChecked}
  const lastSequence = recorded?.last_sequence ?? 0
  if (state.headSequence < lastSequence) {
    return {
      ...base,
      first_invalid_sequence: state.headSequence + 1,
      first_invalid_event_id: null,
      reason: 'sequence_gap',
      expected: String(lastSequence),
      actual: String(state.headSequence),
    }
  }
  if (state.headSequence > lastSequence) {
    return {
      ...base,
      first_invalid_sequence: lastSequence + 1,
      first_invalid_event_id: state.unrecordedId ?? null,
      reason: 'sequence_gap',
      expected: String(lastSequence),
      actual: String(state.headSequence),
    }
  }
  if (recorded && state.headHash !== recorded.head_hash) {
    return {
      ...base,
      first_invalid_sequence: state.headSequence,
      first_invalid_event_id: state.headId,
      reason: 'hash_mismatch',
      expected: recorded.head_hash,
      actual: state.headHash,
    }
  }
  return undefined
}

function resultOf(state: ChainState, heads: ReadonlyMap<string, AgentHead> | undefined): ChainResult {
  if (state.failure) return state.failure
  const failure = heads && headFailure(state, heads.get(state.agentId))
  if (failure) return failure
  return {
    valid: true,
    agent_id: state.agentId,
    events_checked: state.eventsChecked,
    head_sequence: state.headSequence,
    head_hash: state.headHash,
  }
}

function newChain(agentId: string): ChainState {
  return {agentId, eventsChecked: 0, headSequence: 0, headHash: GENESIS_HASH, headId: null}
}

/**
 * Verifies every agent's chain in one pass over the log, events fed in global index order.
 * `heads`: the heads the service recorded, read at the same instant as the number of events that
 * will have been fed when results are asked for (the store's `chainHeads`); without them, the
 * chains are checked on their own (an evidence package, a naive reference).
 */
export class ChainVerifier {
  private readonly chains = new Map<string, ChainState>()
  private heads: ReadonlyMap<string, AgentHead> | undefined
  private keys: KeyTimeline | undefined
  private checker: SignatureChecker | undefined

  /**
   * With `keys` (every key event below the events fed), agents' signatures are checked too
   * (docs/signatures.md): events fed with their signature verdicts, or whole events.
   */
  constructor(heads?: readonly AgentHead[], keys?: KeyTimeline) {
    if (heads) this.useHeads(heads)
    if (keys) this.useKeys(keys)
  }

  /** A newer key state, for a verifier fed further (it must cover every key event below the events fed next). */
  useKeys(keys: KeyTimeline): void {
    this.keys = keys
    this.checker = new SignatureChecker((kid) => keys.owner(kid)?.jwk)
  }

  /** New heads, for a verifier fed further (GET /v1/agents' incremental status). */
  useHeads(heads: readonly AgentHead[]): void {
    this.heads = new Map(heads.map((head) => [head.agent_id, head]))
  }

  /**
   * Feeds events in order: links[i] with hashes[i] = recomputeHash of its event and signatures[i]
   * the verdict of SignatureChecker on it (as add).
   */
  addHashed(
    links: readonly IndexedChainLink[],
    hashes: readonly string[],
    signatures?: ReadonlyArray<SignatureContent | null>,
  ): void {
    for (let i = 0; i < links.length; i++) this.add(links[i]!, hashes[i]!, signatures?.[i])
  }

  /**
   * Feeds the next event; or its link fields and recomputeHash(event), computed elsewhere, with the
   * verdict of SignatureChecker on it when signatures are checked.
   */
  add(event: StoredEvent): void
  add(link: IndexedChainLink, recomputed: string, signature?: SignatureContent | null): void
  add(event: IndexedChainLink, recomputed?: string, signature?: SignatureContent | null): void {
    let state = this.chains.get(event.agent_id)
    if (!state) {
      state = newChain(event.agent_id)
      this.chains.set(event.agent_id, state)
    }
    if (state.failure) return
    state.eventsChecked++
    // Without a recomputed hash, add() was given the whole StoredEvent (its overloads say so).
    const hash = recomputed ?? recomputeHash(event as StoredEvent)
    const failure =
      chainFault({sequence: state.headSequence, hash: state.headHash}, event, hash) ??
      this.signatureFailure(event, recomputed === undefined ? this.checker?.check(event as StoredEvent) : signature)
    if (failure) {
      state.failure = {
        valid: false,
        agent_id: state.agentId,
        events_checked: state.eventsChecked,
        first_invalid_sequence: event.sequence,
        first_invalid_event_id: event.id,
        ...failure,
      }
      return
    }
    if (
      state.unrecordedId === undefined &&
      this.heads &&
      event.sequence > (this.heads.get(event.agent_id)?.last_sequence ?? 0)
    ) {
      state.unrecordedId = event.id
    }
    state.headSequence = event.sequence
    state.headHash = event.hash
    state.headId = event.id
  }

  /** The signature rule (docs/signatures.md) for an event whose verdict is known (the service's own are unsigned). */
  private signatureFailure(
    event: IndexedChainLink,
    content: SignatureContent | null | undefined,
  ): ChainFault | undefined {
    if (this.keys === undefined || content === undefined || event.agent_id.startsWith(RESERVED_AGENT_PREFIX)) {
      return undefined
    }
    const fault = signatureFault(event.agent_id, event.index, content, this.keys)
    if (fault === undefined) return undefined
    const expected = `a signature by a key of agent ${event.agent_id} valid at index ${event.index}`
    return {reason: 'bad_signature', expected, actual: fault.message}
  }

  /** The result for one agent, or undefined when none of its events was fed and none recorded. */
  result(agentId: string): ChainResult | undefined {
    const state = this.chains.get(agentId) ?? (this.heads?.has(agentId) ? newChain(agentId) : undefined)
    return state && resultOf(state, this.heads)
  }

  /**
   * Every agent's result, ordered by agent_id (UTF-16 code unit order): every agent with events,
   * and every agent with a recorded head (one without events fails).
   */
  results(): ChainResult[] {
    const agentIds = [...new Set([...this.chains.keys(), ...(this.heads?.keys() ?? [])])].sort()
    return agentIds.map((agentId) => this.result(agentId)!)
  }

  /** The all-agents form of GET /v1/verify. */
  summary(): AllChainsResult {
    const results = this.results()
    const invalid = results.filter((result): result is ChainInvalid => !result.valid)
    return {
      valid: invalid.length === 0,
      agents_checked: results.length,
      events_checked: results.reduce((sum, result) => sum + result.events_checked, 0),
      invalid_agents: invalid,
    }
  }
}

/**
 * Verifies one agent's chain from its events in index order (events of other agents are skipped).
 * An agent without events is a valid empty chain: head_sequence 0, head_hash GENESIS_HASH.
 */
export function verifyChain(agentId: string, events: Iterable<StoredEvent>): ChainResult {
  const verifier = new ChainVerifier()
  for (const event of events) if (event.agent_id === agentId) verifier.add(event)
  return (
    verifier.result(agentId) ?? {
      valid: true,
      agent_id: agentId,
      events_checked: 0,
      head_sequence: 0,
      head_hash: GENESIS_HASH,
    }
  )
}
