/**
 * A key bound to agents (`agent=PATTERN[,PATTERN...]` on its line, docs/security.md "Keys bound to
 * agents"): the agents it may write and read. Every surface asks the same two questions: may this
 * key write an event of that agent (otherwise 403 naming it), and does it see one (otherwise the
 * event, its proof or its receipt is 404, as if it did not exist).
 */
import {AuditError} from '../errors.js'
import {agentMatcher} from '../trail/name.js'
import type {EventFilter} from '../types.js'
import type {ApiKey} from './keys.js'

export interface AgentScope {
  /** The key line's patterns, `*` any run of characters. */
  readonly patterns: readonly string[]
  matches(agentId: string): boolean
}

/** The scope of a key's `agent=` patterns; undefined (every agent) for a key without them. */
export function agentScopeOf(patterns: readonly string[] | undefined): AgentScope | undefined {
  if (patterns === undefined) return undefined
  return {patterns, matches: agentMatcher(patterns)}
}

const keyScopes = new WeakMap<ApiKey, AgentScope>()

/** The scope of a key bound with `agent=` (compiled once per key), or undefined for an unbound key. */
export function agentScopeOfKey(key: ApiKey): AgentScope | undefined {
  if (key.agents === undefined) return undefined
  let scope = keyScopes.get(key)
  if (scope === undefined) keyScopes.set(key, (scope = agentScopeOf(key.agents)!))
  return scope
}

/** Whether the scope lets its key see (and write) the agent's events; no scope: every agent. */
export function inScope(scope: AgentScope | undefined, agentId: string): boolean {
  return scope === undefined || scope.matches(agentId)
}

/** The refusal of a write of an agent outside the key's scope. */
export function agentForbidden(agentId: string): AuditError {
  return new AuditError('forbidden', `the API key may not write events of agent ${agentId}`)
}

/** Throws 403 naming the agent when the scope does not cover it. */
export function checkWritable(scope: AgentScope | undefined, agentId: string): void {
  if (!inScope(scope, agentId)) throw agentForbidden(agentId)
}

/** A filter narrowed to the agents of a scope: what every read of a bound key asks the store. */
export function scopedFilter(filter: EventFilter, scope: AgentScope | undefined): EventFilter {
  return scope === undefined ? filter : {...filter, agents: scope.patterns}
}
