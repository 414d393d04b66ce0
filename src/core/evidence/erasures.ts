/**
 * The package's `erasures` (docs/verification.md 10): the erasure events its events name, each with
 * its inclusion proof, so that an erased member is shown to have been erased by a recorded erasure
 * that covers it, even when the erasure's own chain is not in the package. Each entry is checked
 * like an event of the package: its hash from its content, its proof against the package root.
 */
import {recomputeHash} from '../chain/index.js'
import {intentOf} from '../erasure/index.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import {hashLeaf, MerkleError, verifyInclusion} from '../merkle/index.js'
import type {StoredEvent} from '../types.js'
import type {EvidencePackage, InclusionProofEntry} from './package.js'
import type {PackageFailure} from './verify.js'

/** One member of `erasures`. */
export interface PackageErasure {
  event: StoredEvent
  proof: InclusionProofEntry
}

const HEX64 = /^[0-9a-f]{64}$/
const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex')
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function entryFailure(i: number, message: string, event_id?: string): PackageFailure {
  return {check: 'erasures', message: `erasures[${i}] ${message}`, ...(event_id === undefined ? {} : {event_id})}
}

/** The first problem of one entry, or undefined when it is an erasure event in the package's tree. */
function entryProblem(pkg: EvidencePackage, entry: unknown, i: number): PackageFailure | undefined {
  if (!isObject(entry) || !isObject(entry.event) || !isObject(entry.proof)) {
    return entryFailure(i, 'is not {"event": <erasure event>, "proof": {"leaf_index", "audit_path"}}')
  }
  const event = entry.event as unknown as StoredEvent
  const proof = entry.proof as unknown as InclusionProofEntry
  const shaped =
    typeof event.id === 'string' &&
    typeof event.hash === 'string' &&
    HEX64.test(event.hash) &&
    Number.isSafeInteger(event.index) &&
    Array.isArray(proof.audit_path) &&
    proof.audit_path.every((hash) => typeof hash === 'string' && HEX64.test(hash))
  if (!shaped) return entryFailure(i, 'is not a stored event with an inclusion proof')
  if (intentOf(event) === undefined) {
    return entryFailure(i, `(event ${event.id}) is not an erasure event with its metadata`, event.id)
  }
  const recomputed = recomputeHash(event)
  if (recomputed !== event.hash) {
    return {...entryFailure(i, `(erasure ${event.id}) does not match its hash`, event.id), actual: event.hash}
  }
  if (proof.leaf_index !== event.index) {
    return entryFailure(i, `(erasure ${event.id}) has a proof for leaf ${proof.leaf_index}, not ${event.index}`)
  }
  try {
    const root = bytes(pkg.merkle.root)
    verifyInclusion(event.index, pkg.merkle.tree_size, hashLeaf(bytes(event.hash)), proof.audit_path.map(bytes), root)
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    const message = `(erasure ${event.id}) is not proven in the package tree: ${error.message}`
    return {...entryFailure(i, message, event.id), expected: pkg.merkle.root, actual: error.actual}
  }
  return undefined
}

/** The package's erasure events by id, each checked; or the first failure. Absent `erasures` is none. */
export function packageErasures(pkg: EvidencePackage): Map<string, StoredEvent> | PackageFailure {
  const erasures = new Map<string, StoredEvent>()
  const entries: unknown = pkg.erasures ?? []
  if (!Array.isArray(entries)) return {check: 'format', message: 'erasures must be an array'}
  for (const [i, entry] of entries.entries()) {
    const problem = entryProblem(pkg, entry, i)
    if (problem !== undefined) return problem
    const event = (entry as PackageErasure).event
    if (erasures.has(event.id)) return entryFailure(i, `repeats erasure ${event.id}`, event.id)
    erasures.set(event.id, event)
  }
  return erasures
}

/** Whether an event's `erased` and `redacted` have their documented shapes (before any check reads them). */
export function markedShapeProblem(event: StoredEvent): string | undefined {
  const members: readonly unknown[] = PAYLOAD_MEMBERS
  const {erased, redacted} = event as {erased?: unknown; redacted?: unknown}
  if (erased !== undefined) {
    const ok =
      isObject(erased) && Object.entries(erased).every(([m, id]) => members.includes(m) && typeof id === 'string')
    if (!ok) return 'erased must map payload members to erasure event ids'
  }
  if (redacted !== undefined) {
    const ok = Array.isArray(redacted) && redacted.every((m) => members.includes(m))
    if (!ok) return 'redacted must be a list of payload members'
  }
  return undefined
}
