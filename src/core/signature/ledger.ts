/**
 * Which events carry no valid signature by their agent (the policy rule `signed_events`,
 * docs/policy.md), kept per agent as runs of consecutive sequences with one reason each: an agent
 * that never signed costs one run, not one entry per event.
 */
import {signatureFault, type SignatureContent} from './event-signature.js'
import type {KeyTimeline} from './key-timeline.js'

interface Run {
  from: number
  to: number
  reason: string
}

const UNSIGNED = 'it carries no signature'

/** Why an event has no valid signature by its agent, or undefined when it has one. */
export function unsignedReason(
  agentId: string,
  index: number,
  content: SignatureContent | null,
  keys: KeyTimeline,
): string | undefined {
  if (content === null) return UNSIGNED
  return signatureFault(agentId, index, content, keys)?.message
}

export class SignatureLedger {
  readonly #runs = new Map<string, Run[]>()

  /** Notes an event's verdict; an agent's events come in increasing sequence. */
  add(agentId: string, sequence: number, reason: string | undefined): void {
    if (reason === undefined) return
    const runs = this.#runs.get(agentId)
    const last = runs?.[runs.length - 1]
    if (last && last.reason === reason && last.to === sequence - 1) last.to = sequence
    else if (runs) runs.push({from: sequence, to: sequence, reason})
    else this.#runs.set(agentId, [{from: sequence, to: sequence, reason}])
  }

  /** Why the agent's event of `sequence` has no valid signature, or undefined when it has one. */
  reasonOf(agentId: string, sequence: number): string | undefined {
    const runs = this.#runs.get(agentId)
    if (!runs) return undefined
    let low = 0
    let high = runs.length - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const run = runs[middle]!
      if (sequence < run.from) high = middle - 1
      else if (sequence > run.to) low = middle + 1
      else return run.reason
    }
    return undefined
  }
}
