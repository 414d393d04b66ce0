/** Test fixtures for the policy engine: small trails of stored events and a recording context. */
import {
  checkPolicies,
  parsePolicyDocument,
  type PolicyContext,
  type PolicyReport,
} from '../../../src/core/policy/index.js'
import type {StoredEvent} from '../../../src/core/types.js'

export const BASE_TIME = Date.parse('2026-03-01T12:00:00.000Z')

export type EventSpec = Partial<
  Pick<StoredEvent, 'agent_id' | 'action_type' | 'action_name' | 'action_status' | 'labels'>
> & {
  /** Milliseconds after BASE_TIME; defaults to one second per event. */
  at?: number
}

/** Stored events in index order, with per-agent sequences as the service assigns them. */
export function makeTrail(specs: EventSpec[]): StoredEvent[] {
  const sequences = new Map<string, number>()
  return specs.map((spec, index) => {
    const agent = spec.agent_id ?? 'agent-a'
    const sequence = (sequences.get(agent) ?? 0) + 1
    sequences.set(agent, sequence)
    const timestamp = new Date(BASE_TIME + (spec.at ?? index * 1000)).toISOString()
    return {
      id: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
      agent_id: agent,
      action_type: spec.action_type ?? 'TOOL_CALL',
      action_name: spec.action_name ?? 'web.search',
      action_status: spec.action_status ?? 'success',
      timestamp,
      labels: spec.labels ?? {},
      sequence,
      prev_hash: '0'.repeat(64),
      recorded_at: timestamp,
      hash: 'a'.repeat(64),
      index,
    }
  })
}

/** The events in batches of two, as a store gives them. */
export async function* streamOf(events: StoredEvent[]): AsyncGenerator<StoredEvent[]> {
  for (let i = 0; i < events.length; i += 2) yield events.slice(i, i + 2)
}

/** A context whose calls are recorded; every chain verifies and a fresh valid timestamp exists. */
export function recordingContext(overrides: Partial<PolicyContext> = {}) {
  const calls = {verifyAgents: [] as string[][], latestTimestamp: 0}
  const context: PolicyContext = {
    now: new Date(BASE_TIME + 3_600_000),
    verifyAgents: async (ids) => ids.map((agent_id) => ({agent_id, valid: true})),
    latestTimestamp: async () => ({timestamp: new Date(BASE_TIME).toISOString(), valid: true}),
    signatureReasons: async () => () => undefined,
    ...overrides,
  }
  const recorded: PolicyContext = {
    now: context.now,
    verifyAgents: (ids) => {
      calls.verifyAgents.push(ids)
      return context.verifyAgents(ids)
    },
    latestTimestamp: () => {
      calls.latestTimestamp++
      return context.latestTimestamp()
    },
    signatureReasons: () => context.signatureReasons(),
  }
  return {context: recorded, calls}
}

/** Validates `rules` (and `scope`) as a request body would be, then checks them over `events`. */
export function check(
  rules: unknown[],
  events: StoredEvent[],
  options: {scope?: unknown; context?: PolicyContext} = {},
): Promise<PolicyReport> {
  const body = options.scope === undefined ? {policies: rules} : {policies: rules, scope: options.scope}
  return checkPolicies(parsePolicyDocument(body), streamOf(events), options.context ?? recordingContext().context)
}

/** The event ids a rule result lists as violations. */
export function violatingIds(report: PolicyReport, rule = 0): Array<string | null> {
  return report.results[rule]!.violations.map((violation) => violation.event_id)
}
