/**
 * Offline verification of an evidence package (docs/verification.md): every event hash, every
 * chain link inside the package, every inclusion proof against `merkle.root` (bound to its event
 * by the event's own hash and index), and the timestamp token with its consistency proof. Stops at
 * the first failure and names it.
 */
import {CHAIN_START, chainFault, recomputeHash, withCommitmentFault, type ChainFailureReason} from '../chain/index.js'
import {erasureReferenceFault} from '../erasure/index.js'
import {STORED_FIELDS} from '../event/index.js'
import {hashLeaf, InclusionVerifier, MerkleError, verifyConsistency, verifyInclusion} from '../merkle/index.js'
import {FILTER_MEMBERS} from '../query-params.js'
import {unsignedFieldMismatch, verifyTimestampToken} from '../timestamp/index.js'
import {type EventFilter, type StoredEvent} from '../types.js'
import {
  checkPackageCheckpoint,
  CheckpointCheckError,
  type CheckpointKeys,
  type CheckpointVerdict,
} from './check-checkpoint.js'
import {checkPackageReceipts, ReceiptCheckError, type ReceiptsVerdict} from './receipts.js'
import {ChainSpanCollector, isTaggedPackage, PACKAGE_FORMAT, versionFor, type EvidencePackage} from './package.js'
import {RESERVED_AGENT_PREFIX} from '../event/index.js'
import {SignatureChecker, signatureFault, type KeyTimeline} from '../signature/index.js'
import {KeysCheckError, missingKeyEvent, packageKeyTimeline} from './keys.js'
import {inSelection} from './selection.js'
import {markedShapeProblem, packageErasures} from './erasures.js'

type PackageCheck =
  | 'format'
  | 'filters'
  | 'completeness'
  | 'event_hash'
  | 'chain_link'
  | 'chain_summary'
  | 'inclusion_proof'
  | 'timestamp'
  | 'consistency'
  | 'checkpoint'
  | 'receipt'
  | 'keys'
  | 'signature'
  | 'erasures'

export interface PackageFailure {
  check: PackageCheck
  /** For event_hash and chain_link: the reason GET /v1/verify gives for the same fault in a store. */
  reason?: ChainFailureReason
  message: string
  event_id?: string
  agent_id?: string
  sequence?: number
  expected?: string
  actual?: string
}

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

const HEX64 = /^[0-9a-f]{64}$/
const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex')

class PackageInvalid extends Error {
  constructor(readonly failure: PackageFailure) {
    super(failure.message)
  }
}

function fail(failure: PackageFailure): never {
  throw new PackageInvalid(failure)
}

function checkShape(pkg: EvidencePackage): void {
  const ok =
    isTaggedPackage(pkg) &&
    pkg.merkle &&
    typeof pkg.merkle.root === 'string' &&
    HEX64.test(pkg.merkle.root) &&
    Number.isSafeInteger(pkg.merkle.tree_size) &&
    pkg.proofs &&
    typeof pkg.proofs === 'object' &&
    pkg.chains &&
    typeof pkg.chains === 'object'
  if (!ok)
    fail({
      check: 'format',
      message: `not an ${PACKAGE_FORMAT} version 1 or 2 document with events, merkle, chains and proofs`,
    })
  // The members docs/verification.md fixes: a reader must not be told "rfc9162-sha256" was checked
  // when the package says otherwise, nor shown a time or a timestamp member that is not there.
  if (pkg.merkle.algorithm !== MERKLE_ALGORITHM) {
    const given = Object.hasOwn(pkg.merkle, 'algorithm') ? `is ${JSON.stringify(pkg.merkle.algorithm)}` : 'is missing'
    fail({
      check: 'format',
      message: `merkle.algorithm ${given}; this verifier checks ${MERKLE_ALGORITHM} only`,
      expected: MERKLE_ALGORITHM,
      actual: String(pkg.merkle.algorithm),
    })
  }
  if (typeof pkg.generated_at !== 'string' || Number.isNaN(Date.parse(pkg.generated_at)))
    fail({check: 'format', message: 'generated_at is not a time'})
  if (
    !Object.hasOwn(pkg, 'timestamp') ||
    (pkg.timestamp !== null && (typeof pkg.timestamp !== 'object' || Array.isArray(pkg.timestamp)))
  ) {
    fail({check: 'format', message: 'timestamp must be null or a timestamp object'})
  }
  if (pkg.timestamp !== null) checkTimestampShape(pkg.timestamp)
  checkFilterShape(pkg.filters)
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** The members of a timestamp record (docs/verification.md), each of its type: the first one that is not is named. */
function checkTimestampShape(timestamp: object): void {
  const ts = timestamp as Record<string, unknown>
  const members: Array<[string, string, (value: unknown) => boolean]> = [
    ['token', 'a DER token in base64', (v) => typeof v === 'string' && v.length % 4 === 0 && BASE64.test(v)],
    ['merkle_root', '64 hex digits', (v) => typeof v === 'string' && HEX64.test(v)],
    ['tree_size', 'a whole number', (v) => Number.isSafeInteger(v) && (v as number) >= 0],
    ['timestamp', 'a time', (v) => typeof v === 'string' && !Number.isNaN(Date.parse(v))],
    ['tsa', 'a name', (v) => typeof v === 'string'],
    [
      'consistency_proof',
      'a list of hashes of 64 hex digits',
      (v) => Array.isArray(v) && v.every((hash) => typeof hash === 'string' && HEX64.test(hash)),
    ],
  ]
  for (const [name, what, holds] of members) {
    if (!holds(ts[name])) {
      fail({
        check: 'format',
        message: `timestamp.${name} is ${Object.hasOwn(ts, name) ? 'not ' + what : 'missing'}`,
        expected: what,
        actual: JSON.stringify(ts[name] ?? null).slice(0, 80),
      })
    }
  }
}

const MERKLE_ALGORITHM = 'rfc9162-sha256'
const FILTER_NAMES = Object.keys(FILTER_MEMBERS) as Array<keyof typeof FILTER_MEMBERS>
const TEXT_FILTERS = FILTER_NAMES.filter((name) => FILTER_MEMBERS[name] === 'text')
const TIME_FILTERS = FILTER_NAMES.filter((name) => FILTER_MEMBERS[name] === 'time')
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** `filters` is a selection export writes: the members of EventFilter, each of its type. */
function checkFilterShape(filters: unknown): void {
  const ok =
    isPlainObject(filters) &&
    Object.keys(filters).every((key) => Object.hasOwn(FILTER_MEMBERS, key)) &&
    TEXT_FILTERS.every((key) => filters[key] === undefined || typeof filters[key] === 'string') &&
    TIME_FILTERS.every(
      (key) =>
        filters[key] === undefined ||
        (typeof filters[key] === 'string' && !Number.isNaN(Date.parse(filters[key] as string))),
    ) &&
    (filters.labels === undefined ||
      (isPlainObject(filters.labels) && Object.values(filters.labels).every((value) => typeof value === 'string')))
  const message = `filters is not a selection of ${FILTER_NAMES.slice(0, -1).join(', ')} and ${FILTER_NAMES.at(-1)}`
  if (!ok) fail({check: 'format', message, actual: JSON.stringify(filters ?? null)})
}

/** Every member a stored event in a package may have; anything else is not covered by the hash. */
const EVENT_MEMBERS: ReadonlySet<string> = new Set([...STORED_FIELDS, 'redacted'])

function isEventShaped(event: StoredEvent): boolean {
  return (
    event !== null &&
    typeof event === 'object' &&
    Object.keys(event).every((key) => EVENT_MEMBERS.has(key)) &&
    typeof event.id === 'string' &&
    typeof event.agent_id === 'string' &&
    typeof event.hash === 'string' &&
    HEX64.test(event.hash) &&
    typeof event.prev_hash === 'string' &&
    Number.isSafeInteger(event.index) &&
    event.index >= 0 &&
    Number.isSafeInteger(event.sequence)
  )
}

/** The package verifier's sentence for a chain fault of `event` (chainFault decides which). */
function faultMessage(event: StoredEvent, previous: StoredEvent | undefined, reason: ChainFailureReason): string {
  const at = `event ${event.id} (sequence ${event.sequence})`
  switch (reason) {
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
      return `${at} has a payload member that does not match its commitment`
    case 'bad_signature':
      return `${at} has no valid signature by a key registered for agent ${event.agent_id}`
  }
}

function checkEvent(
  event: StoredEvent,
  previous: StoredEvent | undefined,
  pkg: EvidencePackage,
  proofs: InclusionVerifier,
  erasures: ReadonlyMap<string, StoredEvent>,
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
  // An erased member must be covered by an erasure the package proves (docs/verification.md 2).
  const reference = event.erased === undefined ? undefined : erasureReferenceFault(event, erasures)
  const recomputed = recomputeHash(event)
  const content = reference === undefined ? recomputed : withCommitmentFault(recomputed, reference)
  const fault = chainFault(previous ?? CHAIN_START, event, content, true)
  if (fault) {
    const content = fault.reason === 'hash_mismatch' || fault.reason === 'commitment_mismatch'
    const check = content ? 'event_hash' : 'chain_link'
    const {reason, expected, actual} = fault
    fail({check, reason, ...where, message: faultMessage(event, previous, reason), expected, actual})
  }
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
function checkSignature(event: StoredEvent, keys: KeyTimeline, checker: SignatureChecker): boolean {
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

/** The package's key events, checked; and none of its agents' key events left out of them. */
function checkKeys(pkg: EvidencePackage): KeyTimeline {
  try {
    return packageKeyTimeline(pkg)
  } catch (error) {
    if (!(error instanceof KeysCheckError)) throw error
    fail({check: 'keys', event_id: error.eventId, message: error.message})
  }
}

function checkChainSummary(pkg: EvidencePackage, collected: ChainSpanCollector): void {
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
function checkCompleteness(pkg: EvidencePackage): void {
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
  if (filterKeys.length === 1 && filterKeys[0] === 'agent_id') {
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
    verifyConsistency(
      ts.tree_size,
      pkg.merkle.tree_size,
      bytes(ts.merkle_root),
      bytes(pkg.merkle.root),
      ts.consistency_proof.map(bytes),
    )
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

export async function verifyPackage(
  pkg: EvidencePackage,
  options: {trustAnchorsPem?: string[]} & CheckpointKeys = {},
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
    const keys = checkKeys(pkg)
    const checker = new SignatureChecker((kid) => keys.owner(kid)?.jwk)
    let signed = 0
    const previousByAgent = new Map<string, StoredEvent>()
    const spans = new ChainSpanCollector()
    let previousIndex = -1
    const proofs = new InclusionVerifier(pkg.merkle.tree_size, bytes(pkg.merkle.root))
    const erasures = packageErasures(pkg)
    if (!(erasures instanceof Map)) fail(erasures)
    summary.erasures = erasures.size
    summary.redacted_events = 0
    for (const event of pkg.events) {
      if (!isEventShaped(event) || event.index <= previousIndex) {
        fail({
          check: 'format',
          event_id: (event as {id?: string})?.id,
          message:
            `events[${summary.events_checked}] is not a stored ` +
            `event in index order (or has members no hash covers)`,
        })
      }
      previousIndex = event.index
      if (!inSelection(event, pkg.filters)) {
        fail({
          check: 'filters',
          event_id: event.id,
          agent_id: event.agent_id,
          sequence: event.sequence,
          message: `event ${event.id} is outside the package's selection ${JSON.stringify(pkg.filters)}`,
        })
      }
      checkEvent(event, previousByAgent.get(event.agent_id), pkg, proofs, erasures)
      if (event.redacted !== undefined) summary.redacted_events++
      if (checkSignature(event, keys, checker)) signed++
      previousByAgent.set(event.agent_id, event)
      spans.add(event)
      summary.events_checked++
    }
    checkChainSummary(pkg, spans)
    checkCompleteness(pkg)
    const left = missingKeyEvent(pkg, new Set(previousByAgent.keys()))
    if (left) fail({check: 'keys', event_id: left.id, message: `the key event ${left.id} is missing from keys`})
    summary.agents = previousByAgent.size
    summary.signatures_checked = signed
    summary.timestamp = await checkTimestamp(pkg, options.trustAnchorsPem)
    try {
      const tree = {size: pkg.merkle.tree_size, root: pkg.merkle.root}
      summary.checkpoint = checkPackageCheckpoint(pkg.checkpoint, tree, options)
    } catch (error) {
      if (error instanceof CheckpointCheckError) fail({check: 'checkpoint', message: error.message})
      throw error
    }
    try {
      summary.receipts = checkPackageReceipts(pkg, options.logKey)
    } catch (error) {
      if (error instanceof ReceiptCheckError) fail({check: 'receipt', message: error.message, event_id: error.eventId})
      throw error
    }
    summary.valid = true
  } catch (error) {
    if (!(error instanceof PackageInvalid)) throw error
    summary.failure = error.failure
  }
  return summary
}
