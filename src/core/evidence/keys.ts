/**
 * The `keys` member of an evidence package (docs/verification.md 8): the whole chain of
 * `audit-trail:keys` up to the package's tree size, each event `{event, proof}`. Each must be a key
 * event whose content gives its hash and whose inclusion proof leads to the package root, and
 * together they must be that chain from its first event, every link unbroken: so a key event left
 * out (a revocation, which would make later signatures look valid) is a chain gap, whatever
 * selection the package holds.
 */
import {CHAIN_START, chainFault, recomputeHash, type ChainPosition} from '../chain/index.js'
import {RESERVED_AGENT_PREFIX} from '../event/fields.js'
import {
  keyEventFacts,
  KeyTimeline,
  KEYS_AGENT,
  SignatureChecker,
  SignatureLedger,
  unsignedReason,
} from '../signature/index.js'
import type {StoredEvent} from '../types.js'
import {checkProvenEntry} from './entries.js'
import {EvidenceError, fail} from './failures.js'
import type {EvidencePackage} from './types.js'

/** Fails unless the entry's event is the next one of the `audit-trail:keys` chain after `previous`. */
function checkLink(event: StoredEvent, position: number, previous: ChainPosition): void {
  const at = `keys[${position}] (event ${event.id})`
  if (event.agent_id !== KEYS_AGENT || keyEventFacts(event) === undefined) {
    fail({check: 'keys', event_id: event.id, message: `${at} is not a key event of ${KEYS_AGENT}`})
  }
  const fault = chainFault(previous, event, recomputeHash(event))
  if (fault === undefined) return
  const {reason, expected, actual} = fault
  const what =
    reason === 'sequence_gap'
      ? `has sequence ${event.sequence} after ${previous.sequence}: keys must be the whole chain of ${KEYS_AGENT}`
      : `does not link to the key event before it (${reason})`
  const where = {event_id: event.id, agent_id: event.agent_id, sequence: event.sequence}
  fail({check: 'keys', reason, ...where, message: `${at} ${what}`, expected, actual})
}

/**
 * The key timeline of a package's `keys` (absent in packages written before signatures: none),
 * every entry checked; fails at the first that does not hold.
 */
export function packageKeyTimeline(pkg: EvidencePackage): KeyTimeline {
  const timeline = new KeyTimeline()
  const entries: unknown = pkg.keys ?? []
  if (!Array.isArray(entries)) fail({check: 'keys', message: 'keys is not a list of key events with their proofs'})
  let previous: ChainPosition = CHAIN_START
  let after = -1
  for (const [position, entry] of entries.entries()) {
    const event = checkProvenEntry(pkg, 'keys', position, entry)
    checkLink(event, position, previous)
    if (event.index <= after)
      fail({check: 'keys', event_id: event.id, message: `keys[${position}] is not in index order`})
    previous = {sequence: event.sequence, hash: event.hash}
    after = event.index
    timeline.apply(event)
  }
  return timeline
}

/**
 * Fails at the first event of `audit-trail:keys` among the package's events that `keys` does not
 * hold: `keys` is that whole chain, so it holds every one the package shows.
 */
export function checkKeysHoldEvents(pkg: EvidencePackage): void {
  const listed = new Set<string>()
  for (const entry of pkg.keys ?? []) listed.add(entry.event.id)
  const left = pkg.events.find((event) => event.agent_id === KEYS_AGENT && !listed.has(event.id))
  if (left) fail({check: 'keys', event_id: left.id, message: `the key event ${left.id} is missing from keys`})
}

/**
 * Why each of the package's events has no valid signature by its agent (the policy rule
 * signed_events over a package), by agent and sequence. When the package's `keys` do not hold, no
 * signature counts as valid.
 */
export function packageSignatureReasons(
  pkg: EvidencePackage,
): (agentId: string, sequence: number) => string | undefined {
  let keys: KeyTimeline
  try {
    keys = packageKeyTimeline(pkg)
  } catch (error) {
    if (!(error instanceof EvidenceError)) throw error
    const reason = `the package's keys do not verify: ${error.message}`
    return () => reason
  }
  const checker = new SignatureChecker((kid) => keys.owner(kid)?.jwk)
  const ledger = new SignatureLedger()
  for (const event of pkg.events) {
    if (event.agent_id.startsWith(RESERVED_AGENT_PREFIX)) continue
    ledger.add(event.agent_id, event.sequence, unsignedReason(event.agent_id, event.index, checker.check(event), keys))
  }
  return (agentId, sequence) => ledger.reasonOf(agentId, sequence)
}
