/**
 * What the policy engine needs from outside the event stream, and the interface every rule checker
 * implements. Core code stays pure: verification and timestamp checks are done by the caller,
 * which owns the store and the TSA trust anchors.
 */
import type {EventHeader} from '../types.js'
import type {Rule} from './rule.js'
import type {ViolationList} from './violation.js'

/** One agent's whole-chain verification (GET /v1/verify?agent_id=X, docs/api.md). */
export interface AgentVerification {
  agent_id: string
  valid: boolean
  first_invalid_sequence?: number
  first_invalid_event_id?: string | null
  reason?: string
}

/** The latest timestamp and whether it verifies (GET /v1/timestamps/verify). */
export interface LatestTimestamp {
  timestamp: string
  valid: boolean
  error?: string
}

/** Why an agent's event (by sequence) has no valid signature by a key of its agent; undefined when it has one. */
export type SignatureReasons = (agentId: string, sequence: number) => string | undefined

export interface PolicyContext {
  now: Date
  /** Whole-chain verification per agent; called at most once per check, with the agents in scope. */
  verifyAgents(agentIds: string[]): Promise<AgentVerification[]>
  /** Called at most once per check; null when no timestamp was ever issued. */
  latestTimestamp(): Promise<null | LatestTimestamp>
  /** Every event's signature verdict (docs/signatures.md); called before the events, by the rules that need it. */
  signatureReasons(): Promise<SignatureReasons>
}

/** What checkers see once the stream has ended. The context calls are shared by all rules. */
export interface CheckEnd {
  now: Date
  /** Agents with at least one event in scope, in order of first appearance. */
  agents: string[]
  verifyAgents(): Promise<AgentVerification[]>
  latestTimestamp(): Promise<null | LatestTimestamp>
}

export interface RuleChecker {
  readonly rule: Rule
  readonly violations: ViolationList
  /** Asks the context what the rule needs before it sees the first event. */
  prepare?(context: PolicyContext): Promise<void>
  /** Sees every in-scope event once, in index order. */
  observe?(event: EventHeader): void
  /** Decides what can only be decided after the last event. */
  finish?(end: CheckEnd): Promise<void>
}

/** Wraps the caller's context so each expensive call happens at most once, and only when needed. */
export function createCheckEnd(context: PolicyContext, agents: string[]): CheckEnd {
  let verification: Promise<AgentVerification[]> | undefined
  let latest: Promise<null | LatestTimestamp> | undefined
  return {
    now: context.now,
    agents,
    // An empty list is not sent: a caller could read "no agents" as "every agent".
    verifyAgents: () => (verification ??= agents.length === 0 ? Promise.resolve([]) : context.verifyAgents(agents)),
    latestTimestamp: () => (latest ??= context.latestTimestamp()),
  }
}
