/**
 * Offline verification of an evidence package (docs/verification.md): every event hash and
 * payload commitment, every chain link inside the package, every inclusion proof against
 * `merkle.root` (bound to its event by the event's own hash and index), the key and erasure events
 * the package carries, and the timestamp, checkpoint and receipts. Stops at the first failure and
 * names it.
 */
import {InclusionVerifier, MerkleError, verifyConsistency} from '../merkle/index.js'
import {unsignedFieldMismatch, verifyTimestampToken} from '../timestamp/index.js'
import {type EventFilter, type StoredEvent} from '../types.js'
import {SignatureChecker} from '../signature/index.js'
import {checkPackageCheckpoint, type CheckpointKeys, type CheckpointVerdict} from './check-checkpoint.js'
import {packageErasures} from './erasures.js'
import {checkChainSummary, checkCompleteness, checkEvent, checkSignature} from './event-checks.js'
import {EvidenceError, fail, type PackageFailure} from './failures.js'
import {checkKeysHoldEvents, packageKeyTimeline} from './keys.js'
import {ChainSpanCollector} from './package.js'
import {checkPackageReceipts, type ReceiptsVerdict} from './receipts.js'
import {inSelection} from './selection.js'
import {checkShape, isEventShaped, isPlainObject} from './shape.js'
import type {EvidencePackage} from './types.js'

export type {PackageFailure} from './failures.js'

export interface PackageVerification {
  valid: boolean
  /** The selection the package says it holds (its `filters`), for the reader to compare with what was asked for. */
  filters: EventFilter
  events_checked: number
  agents: number
  tree_size: number
  merkle_root: string
  timestamp: null | {
    valid: boolean
    tsa: string
    tsa_time: string
    tree_size: number
    trust_anchor: 'tsa-ca' | 'package'
  }
  /** The package's C2SP checkpoint, null when it has none. */
  checkpoint: CheckpointVerdict | null
  /** The package's COSE Receipts, null when it has none. */
  receipts: ReceiptsVerdict | null
  /** Events whose agent's signature was checked against the package's `keys` (docs/verification.md 8). */
  signatures_checked?: number
  /** Erasure events checked (`erasures`), and events that withhold members (`redacted`). */
  erasures?: number
  redacted_events?: number
  failure?: PackageFailure
}

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex')

async function checkTimestamp(
  pkg: EvidencePackage,
  trustAnchorsPem: string[] | undefined,
): Promise<PackageVerification['timestamp']> {
  const ts = pkg.timestamp
  // Whoever brings their own trust anchor asks for a timestamp that verifies against it.
  if (!ts) {
    if (trustAnchorsPem)
      fail({
        check: 'timestamp',
        message: 'the package has no timestamp to check against the given trust anchors (--tsa-ca)',
      })
    return null
  }
  const anchors = trustAnchorsPem ?? pkg.tsa_certificates ?? []
  const result = await verifyTimestampToken(Buffer.from(ts.token, 'base64'), {
    digest: bytes(ts.merkle_root),
    trustAnchorsPem: anchors,
  })
  if (!result.valid) fail({check: 'timestamp', message: `the timestamp token does not verify: ${result.error}`})
  const mismatch = unsignedFieldMismatch(ts, result)
  if (mismatch) {
    const what = mismatch.field === 'timestamp' ? 'the time signed in the token' : 'the signer named in the token'
    fail({
      check: 'timestamp',
      message: `timestamp.${mismatch.field} differs from ${what}`,
      expected: mismatch.signed,
      actual: mismatch.claimed,
    })
  }
  try {
    const proof = ts.consistency_proof.map(bytes)
    verifyConsistency(ts.tree_size, pkg.merkle.tree_size, bytes(ts.merkle_root), bytes(pkg.merkle.root), proof)
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    fail({
      check: 'consistency',
      message:
        `the timestamped tree (size ${ts.tree_size}) is not a prefix of the package tree (size ` +
        `${pkg.merkle.tree_size}): ${error.message}`,
    })
  }
  return {
    valid: true,
    tsa: result.tsaName ?? ts.tsa,
    tsa_time: result.genTime ?? ts.timestamp,
    tree_size: ts.tree_size,
    trust_anchor: trustAnchorsPem ? 'tsa-ca' : 'package',
  }
}

/**
 * Event hashes computed elsewhere from the package's text (threads/package-hashes.ts): by position
 * in `events`, null where the verification computes the hash itself, a promise while it is under way.
 */
export interface PrecomputedHashes {
  hashAt(position: number): string | null | Promise<string | null>
}

/** Checks every event in order, with the package's keys and erasures; fills the summary's counts. */
async function checkEvents(pkg: EvidencePackage, summary: PackageVerification, hashes?: PrecomputedHashes) {
  const keys = packageKeyTimeline(pkg)
  const checker = new SignatureChecker((kid) => keys.owner(kid)?.jwk)
  const erasures = packageErasures(pkg)
  const proofs = new InclusionVerifier(pkg.merkle.tree_size, bytes(pkg.merkle.root))
  const previousByAgent = new Map<string, StoredEvent>()
  const spans = new ChainSpanCollector()
  let previousIndex = -1
  let signed = 0
  summary.erasures = erasures.size
  summary.redacted_events = 0
  for (const event of pkg.events) {
    if (!isEventShaped(event) || event.index <= previousIndex) {
      fail({
        check: 'format',
        event_id: (event as {id?: string})?.id,
        message:
          `events[${summary.events_checked}] is not a stored event in index order ` + '(or has members no hash covers)',
      })
    }
    previousIndex = event.index
    if (!inSelection(event, pkg.filters)) {
      const where = {event_id: event.id, agent_id: event.agent_id, sequence: event.sequence}
      const message = `event ${event.id} is outside the package's selection ${JSON.stringify(pkg.filters)}`
      fail({check: 'filters', ...where, message})
    }
    const given = hashes?.hashAt(summary.events_checked)
    const precomputed = given instanceof Promise ? await given : given
    checkEvent(event, previousByAgent.get(event.agent_id), pkg, proofs, erasures, precomputed)
    if (event.redacted !== undefined) summary.redacted_events++
    if (checkSignature(event, keys, checker)) signed++
    previousByAgent.set(event.agent_id, event)
    spans.add(event)
    summary.events_checked++
  }
  checkChainSummary(pkg, spans)
  checkCompleteness(pkg)
  checkKeysHoldEvents(pkg)
  summary.agents = previousByAgent.size
  summary.signatures_checked = signed
}

export async function verifyPackage(
  pkg: EvidencePackage,
  options: {trustAnchorsPem?: string[]; hashes?: PrecomputedHashes} & CheckpointKeys = {},
): Promise<PackageVerification> {
  const summary: PackageVerification = {
    valid: false,
    filters: isPlainObject(pkg?.filters) ? pkg.filters : {},
    events_checked: 0,
    agents: 0,
    tree_size: pkg?.merkle?.tree_size ?? 0,
    merkle_root: pkg?.merkle?.root ?? '',
    timestamp: null,
    checkpoint: null,
    receipts: null,
  }
  try {
    checkShape(pkg)
    await checkEvents(pkg, summary, options.hashes)
    summary.timestamp = await checkTimestamp(pkg, options.trustAnchorsPem)
    const tree = {size: pkg.merkle.tree_size, root: pkg.merkle.root}
    summary.checkpoint = checkPackageCheckpoint(pkg.checkpoint, tree, options)
    summary.receipts = checkPackageReceipts(pkg, options.logKey)
    summary.valid = true
  } catch (error) {
    if (!(error instanceof EvidenceError)) throw error
    summary.failure = error.failure
  }
  return summary
}
