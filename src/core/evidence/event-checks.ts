/**
 * The checks of each event of a package (docs/verification.md 2 to 5 and 8), and of what the
 * package says about its events as a whole (`chains`, completeness).
 */
import {CHAIN_START, chainFault, recomputeHash, withCommitmentFault, type ChainFault} from '../chain/index.js'
import {erasureReferenceFault} from '../erasure/index.js'
import {RESERVED_AGENT_PREFIX} from '../event/fields.js'
import {hashLeaf, InclusionVerifier, MerkleError, verifyInclusion} from '../merkle/index.js'
import {SignatureChecker, signatureFault, type KeyTimeline} from '../signature/index.js'
import type {StoredEvent} from '../types.js'
import {markedShapeProblem} from './entries.js'
import {fail} from './failures.js'
import {ChainSpanCollector, versionFor} from './package.js'
import type {EvidencePackage} from './types.js'

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex')

/** The package verifier's sentence for a chain fault of `event` (chainFault decides which). */
function faultMessage(event: StoredEvent, previous: StoredEvent | undefined, fault: ChainFault): string {
  const at = `event ${event.id} (sequence ${event.sequence})`
  switch (fault.reason) {
    case 'hash_mismatch':
      return `${at} does not match its hash`
    case 'bad_genesis':
      return `event ${event.id} is the first of agent ${event.agent_id} but its prev_hash is not the genesis hash`
    case 'sequence_gap': {
      const after = `sequence ${previous?.sequence ?? 0} of the same agent`
      return `event ${event.id} has sequence ${event.sequence} after ${after}`
    }
    case 'broken_link':
      return `${at} does not link to sequence ${previous?.sequence}`
    case 'commitment_mismatch':
      return `${at} has a payload member that contradicts its commitment: ${fault.expected}, found ${fault.actual}`
    case 'bad_signature':
      return `${at} has no valid signature by a key registered for agent ${event.agent_id}`
  }
}

export function checkEvent(
  event: StoredEvent,
  previous: StoredEvent | undefined,
  pkg: EvidencePackage,
  proofs: InclusionVerifier,
  erasures: ReadonlyMap<string, StoredEvent>,
  precomputed?: string | null,
): void {
  const where = {event_id: event.id, agent_id: event.agent_id, sequence: event.sequence}
  if (versionFor(event) > pkg.version) {
    fail({
      check: 'format',
      ...where,
      message: `event ${event.id} needs package version 2, the package says ${pkg.version}`,
    })
  }
  const marked = markedShapeProblem(event)
  if (marked !== undefined) fail({check: 'format', ...where, message: `event ${event.id}: ${marked}`})
  // An erased member must be covered by an erasure the package proves (docs/verification.md 10).
  const reference = event.erased === undefined ? undefined : erasureReferenceFault(event, erasures)
  // A hash another thread computed from the same text (threads/package-hashes.ts), or computed here.
  const recomputed = precomputed ?? recomputeHash(event)
  const content = reference === undefined ? recomputed : withCommitmentFault(recomputed, reference)
  const fault = chainFault(previous ?? CHAIN_START, event, content, true)
  if (fault) {
    const content = fault.reason === 'hash_mismatch' || fault.reason === 'commitment_mismatch'
    const check = content ? 'event_hash' : 'chain_link'
    const {reason, expected, actual} = fault
    fail({check, reason, ...where, message: faultMessage(event, previous, fault), expected, actual})
  }
  checkProof(event, pkg, proofs)
}

/** The event's inclusion proof: bound to it by its index, leading to the package root (docs/verification.md 5). */
function checkProof(event: StoredEvent, pkg: EvidencePackage, proofs: InclusionVerifier): void {
  const where = {event_id: event.id, agent_id: event.agent_id, sequence: event.sequence}
  const proof = Object.hasOwn(pkg.proofs, event.id) ? pkg.proofs[event.id] : undefined
  if (!proof || proof.leaf_index !== event.index || !Array.isArray(proof.audit_path)) {
    fail({
      check: 'inclusion_proof',
      ...where,
      message: `event ${event.id} has no inclusion proof for its index ${event.index}`,
    })
  }
  const leaf = hashLeaf(bytes(event.hash))
  // The shared-path shortcut settles valid proofs; anything else gets the full check and its error.
  if (proofs.proven(event.index, leaf, proof.audit_path)) return
  try {
    verifyInclusion(event.index, pkg.merkle.tree_size, leaf, proof.audit_path.map(bytes), bytes(pkg.merkle.root))
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    fail({
      check: 'inclusion_proof',
      ...where,
      message:
        `the inclusion proof of event ${event.id} (index ${event.index}) does not lead to the package root: ` +
        `${error.message}`,
      expected: pkg.merkle.root,
      actual: error.actual,
    })
  }
}

/** The event's signature against the key state at its index (docs/signatures.md); true when it has a valid one. */
export function checkSignature(event: StoredEvent, keys: KeyTimeline, checker: SignatureChecker): boolean {
  if (event.agent_id.startsWith(RESERVED_AGENT_PREFIX)) return false
  const content = checker.check(event)
  const fault = signatureFault(event.agent_id, event.index, content, keys)
  if (fault) {
    const where = {event_id: event.id, agent_id: event.agent_id, sequence: event.sequence}
    const expected = `a signature by a key of agent ${event.agent_id} valid at index ${event.index}`
    fail({
      check: 'signature',
      reason: 'bad_signature',
      ...where,
      message: `event ${event.id}: ${fault.message}`,
      expected,
    })
  }
  return content !== null
}

export function checkChainSummary(pkg: EvidencePackage, collected: ChainSpanCollector): void {
  const actual = collected.toObject()
  const claimed = pkg.chains
  const agents = new Set([...Object.keys(actual), ...Object.keys(claimed)])
  for (const agent of agents) {
    const a = actual[agent]
    const c = claimed[agent]
    if (
      !a ||
      !c ||
      a.first_sequence !== c.first_sequence ||
      a.last_sequence !== c.last_sequence ||
      a.anchor_prev_hash !== c.anchor_prev_hash ||
      a.head_hash !== c.head_hash
    ) {
      fail({
        check: 'chain_summary',
        agent_id: agent,
        message: `the chains entry of agent ${agent} does not match the package's events`,
        expected: JSON.stringify(a ?? null),
        actual: JSON.stringify(c ?? null),
      })
    }
  }
}

/**
 * What the package claims to hold: with no filter, every event of the tree (indexes 0..n-1); with
 * only an agent filter, that agent's whole chain up to the tree size (sequences 1..last); and a
 * proof for exactly the events it holds. Other filters select by content and can leave gaps.
 */
export function checkCompleteness(pkg: EvidencePackage): void {
  const filterKeys = Object.keys(pkg.filters ?? {})
  if (Object.keys(pkg.proofs).length !== pkg.events.length) {
    fail({
      check: 'format',
      message: `the package has ${Object.keys(pkg.proofs).length} proofs for ${pkg.events.length} events`,
    })
  }
  if (filterKeys.length === 0 && pkg.events.length !== pkg.merkle.tree_size) {
    fail({
      check: 'completeness',
      message:
        `the package has no filter but holds ${pkg.events.length}` +
        ` of the ${pkg.merkle.tree_size} events of its tree`,
      expected: String(pkg.merkle.tree_size),
      actual: String(pkg.events.length),
    })
  }
  // A key bound to agents exports their whole chains too (docs/security.md): `agents` alone or with `agent_id`.
  if (filterKeys.length > 0 && filterKeys.every((key) => key === 'agent_id' || key === 'agents')) {
    for (const [agent, span] of Object.entries(pkg.chains)) {
      const count = pkg.events.filter((e) => e.agent_id === agent).length
      if (span.first_sequence !== 1 || count !== span.last_sequence) {
        fail({
          check: 'completeness',
          agent_id: agent,
          message:
            `the package is filtered by agent only but holds ${count} of sequences ${span.first_sequence}` +
            `..${span.last_sequence} of agent ${agent}`,
        })
      }
    }
  }
}
