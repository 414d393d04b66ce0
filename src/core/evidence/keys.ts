/**
 * The `keys` member of an evidence package (docs/verification.md 8): the key events of its agents,
 * each `{event, proof}`. Each must be a key event of `audit-trail:keys` whose content gives its
 * hash and whose inclusion proof leads to the package root, in index order; together they give the
 * key timeline the package's signatures are checked against.
 */
import {recomputeHash} from '../chain/index.js'
import {hashLeaf, MerkleError, verifyInclusion} from '../merkle/index.js'
import {RESERVED_AGENT_PREFIX} from '../event/validate.js'
import {
  keyEventFacts,
  KeyTimeline,
  KEYS_AGENT,
  SignatureChecker,
  SignatureLedger,
  unsignedReason,
} from '../signature/index.js'
import type {StoredEvent} from '../types.js'
import type {EvidencePackage} from './package.js'

/** A `keys` entry that does not hold; `eventId` names its event when it has one. */
export class KeysCheckError extends Error {
  constructor(
    message: string,
    readonly eventId?: string,
  ) {
    super(message)
  }
}

const HEX64 = /^[0-9a-f]{64}$/
const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex')
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function checkEntry(entry: unknown, position: number, pkg: EvidencePackage, after: number): StoredEvent {
  const event = isObject(entry) ? (entry.event as StoredEvent) : undefined
  const proof = isObject(entry) && isObject(entry.proof) ? entry.proof : undefined
  if (!isObject(event) || !proof) throw new KeysCheckError(`keys[${position}] is not {"event": ..., "proof": ...}`)
  const shaped =
    typeof event.id === 'string' &&
    typeof event.hash === 'string' &&
    HEX64.test(event.hash) &&
    Number.isSafeInteger(event.index) &&
    event.index > after
  if (!shaped) throw new KeysCheckError(`keys[${position}] is not a stored event in index order`, event.id)
  if (event.agent_id !== KEYS_AGENT || keyEventFacts(event) === undefined) {
    throw new KeysCheckError(`keys[${position}] (event ${event.id}) is not a key event of ${KEYS_AGENT}`, event.id)
  }
  if (recomputeHash(event) !== event.hash) {
    throw new KeysCheckError(`the key event ${event.id} does not match its hash`, event.id)
  }
  const path = proof.audit_path
  if (proof.leaf_index !== event.index || !Array.isArray(path) || !path.every((h) => typeof h === 'string')) {
    throw new KeysCheckError(`the key event ${event.id} has no inclusion proof for its index ${event.index}`, event.id)
  }
  try {
    const leaf = hashLeaf(bytes(event.hash))
    verifyInclusion(event.index, pkg.merkle.tree_size, leaf, (path as string[]).map(bytes), bytes(pkg.merkle.root))
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    const what = `the inclusion proof of the key event ${event.id}`
    throw new KeysCheckError(`${what} does not lead to the package root: ${error.message}`, event.id)
  }
  return event
}

/**
 * The key timeline of a package's `keys` (absent in packages written before signatures: none),
 * every entry checked; throws KeysCheckError at the first that does not hold.
 */
export function packageKeyTimeline(pkg: EvidencePackage): KeyTimeline {
  const timeline = new KeyTimeline()
  const entries: unknown = pkg.keys ?? []
  if (!Array.isArray(entries)) throw new KeysCheckError('keys is not a list of key events with their proofs')
  let after = -1
  for (const [position, entry] of entries.entries()) {
    const event = checkEntry(entry, position, pkg, after)
    after = event.index
    timeline.apply(event)
  }
  return timeline
}

/**
 * The first key event among the package's events that names one of its agents and is missing from
 * `keys` (an exporter leaving out a revocation would make later signatures look valid), or undefined.
 */
export function missingKeyEvent(pkg: EvidencePackage, agents: ReadonlySet<string>): StoredEvent | undefined {
  const listed = new Set<string>()
  for (const entry of pkg.keys ?? []) listed.add(entry.event.id)
  return pkg.events.find((event) => {
    const facts = event.agent_id === KEYS_AGENT ? keyEventFacts(event) : undefined
    return facts !== undefined && agents.has(facts.agentId) && !listed.has(event.id)
  })
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
    if (!(error instanceof KeysCheckError)) throw error
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
