/**
 * The lines `serve` prints about human oversight (docs/oversight.md): which keys may decide, by
 * their `name=` (never the key itself), and each decision as it is recorded, by whichever process
 * of the log recorded it.
 */
import type {ApiKey} from '../core/auth/keys.js'
import {APPROVAL_DENIED, APPROVAL_GRANTED, APPROVALS_AGENT} from '../core/approval/index.js'
import type {Feed} from '../services/feed.js'

/** `approve keys: alice, bob, 1 unnamed`, or undefined when no key may decide. */
export function approverLine(keys: readonly ApiKey[]): string | undefined {
  const approvers = keys.filter((key) => key.scopes.has('approve'))
  if (approvers.length === 0) return undefined
  const named = approvers.flatMap((key) => (key.name === undefined ? [] : [key.name]))
  const unnamed = approvers.length - named.length
  return `approve keys: ${[...named, ...(unnamed > 0 ? [`${unnamed} unnamed`] : [])].join(', ')}`
}

/** Logs every decision on a held call; returns the function that stops it. */
export function logDecisions(feed: Feed, log: (line: string) => void): () => void {
  const onEvents = (
    events: ReadonlyArray<{agent_id: string; action_type: string; labels?: Record<string, string>}>,
  ) => {
    for (const event of events) {
      if (event.agent_id !== APPROVALS_AGENT) continue
      if (event.action_type !== APPROVAL_GRANTED && event.action_type !== APPROVAL_DENIED) continue
      const labels = event.labels ?? {}
      const reason = labels.reason === undefined ? '' : `: ${labels.reason}`
      log(`audit-trail: approval ${labels.approval_id} ${labels.outcome} by ${labels.decided_by}${reason}`)
    }
  }
  feed.on('events', onEvents)
  return () => void feed.off('events', onEvents)
}
