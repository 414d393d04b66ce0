/**
 * The members `keys` and `erasures` of a package hold service events beside `events`, each as
 * `{"event": <stored event>, "proof": {"leaf_index", "audit_path"}}` (docs/verification.md 8 and
 * 10). Each is checked as an event of the package: its content against its hash and commitments
 * (section 2, so an erased member no erasure covers fails here too), its proof against the
 * package root (section 5).
 */
import {contentFault, recomputeHash, withCommitmentFault, type ChainFault} from '../chain/index.js'
import type {CommitmentFault} from '../event/commitment.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import {hashLeaf, MerkleError, verifyInclusion} from '../merkle/index.js'
import type {StoredEvent} from '../types.js'
import {fail, type EvidenceErrorCode} from './failures.js'
import type {EvidencePackage, InclusionProofEntry} from './types.js'

const HEX64 = /^[0-9a-f]{64}$/
const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex')
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The sentence for a content fault of an event (its hash, or one of its payload members). */
export function contentMessage(event: StoredEvent, fault: ChainFault): string {
  if (fault.reason === 'hash_mismatch') return `event ${event.id} does not match its hash`
  const what = `${fault.expected}, found ${fault.actual}`
  return `event ${event.id} has a payload member that contradicts its commitment: ${what}`
}

/** An entry's event and proof, each of its form; fails naming the entry otherwise. */
function shapedEntry(section: EvidenceErrorCode, at: string, entry: unknown): [StoredEvent, InclusionProofEntry] {
  const event = isObject(entry) && isObject(entry.event) ? (entry.event as unknown as StoredEvent) : undefined
  const proof = isObject(entry) && isObject(entry.proof) ? (entry.proof as unknown as InclusionProofEntry) : undefined
  if (event === undefined || proof === undefined) {
    fail({check: section, message: `${at} is not {"event": <stored event>, "proof": {"leaf_index", "audit_path"}}`})
  }
  const shaped =
    typeof event.id === 'string' &&
    typeof event.agent_id === 'string' &&
    typeof event.hash === 'string' &&
    HEX64.test(event.hash) &&
    Number.isSafeInteger(event.index) &&
    event.index >= 0 &&
    Array.isArray(proof.audit_path) &&
    proof.audit_path.every((hash) => typeof hash === 'string' && HEX64.test(hash))
  if (!shaped) fail({check: section, message: `${at} is not a stored event with an inclusion proof`})
  const marked = markedShapeProblem(event)
  if (marked !== undefined) fail({check: section, event_id: event.id, message: `${at}: ${marked}`})
  return [event, proof]
}

/**
 * Checks one entry of `keys` or `erasures`: form, content (with `extra`, a fault found outside the
 * event, such as an erasure that does not cover it) and inclusion proof. Returns its event.
 */
export function checkProvenEntry(
  pkg: EvidencePackage,
  section: EvidenceErrorCode,
  position: number,
  entry: unknown,
  extra?: (event: StoredEvent) => CommitmentFault | undefined,
): StoredEvent {
  const at = `${section}[${position}]`
  const [event, proof] = shapedEntry(section, at, entry)
  const where = {event_id: event.id, agent_id: event.agent_id, sequence: event.sequence}
  const outside = extra?.(event)
  const recomputed = recomputeHash(event)
  const fault = contentFault(outside === undefined ? recomputed : withCommitmentFault(recomputed, outside), event.hash)
  if (fault) {
    const {reason, expected, actual} = fault
    fail({check: section, reason, ...where, message: `${at}: ${contentMessage(event, fault)}`, expected, actual})
  }
  if (proof.leaf_index !== event.index) {
    fail({check: section, ...where, message: `${at} has a proof for leaf ${proof.leaf_index}, not ${event.index}`})
  }
  try {
    const leaf = hashLeaf(bytes(event.hash))
    verifyInclusion(event.index, pkg.merkle.tree_size, leaf, proof.audit_path.map(bytes), bytes(pkg.merkle.root))
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    const what = `the inclusion proof of ${at} (event ${event.id})`
    const message = `${what} does not lead to the package root: ${error.message}`
    fail({check: section, ...where, message, expected: pkg.merkle.root, actual: error.actual})
  }
  return event
}

/**
 * Whether an event's `erased`, `redacted` and `salts` have their documented shapes (before any
 * check reads them): no hash covers them, so nothing else would refuse a member they should not have.
 */
export function markedShapeProblem(event: StoredEvent): string | undefined {
  const members: readonly unknown[] = PAYLOAD_MEMBERS
  const {erased, redacted, salts} = event as {erased?: unknown; redacted?: unknown; salts?: unknown}
  if (salts !== undefined) {
    const ok =
      isObject(salts) && Object.entries(salts).every(([m, salt]) => members.includes(m) && typeof salt === 'string')
    if (!ok) return 'salts must map payload members to salts'
  }
  if (erased !== undefined) {
    const ok =
      isObject(erased) && Object.entries(erased).every(([m, id]) => members.includes(m) && typeof id === 'string')
    if (!ok) return 'erased must map payload members to erasure event ids'
  }
  if (redacted !== undefined) {
    const ok =
      Array.isArray(redacted) &&
      redacted.every((m) => members.includes(m)) &&
      new Set(redacted).size === redacted.length
    if (!ok) return 'redacted must be a list of payload members, each once'
  }
  return undefined
}
