/** The evidence package's members (docs/verification.md 1), shared by its writer and its checks. */
import type {EventFilter, StoredEvent} from '../types.js'
import type {PackageCheckpoint} from './check-checkpoint.js'

export const PACKAGE_FORMAT = 'atrail-evidence'
/**
 * 2 once any event in it has commitments, erasures, redactions or a signature (docs/verification.md
 * 1); a verifier reads both.
 */
export const PACKAGE_VERSIONS = [1, 2] as const
export type PackageVersion = (typeof PACKAGE_VERSIONS)[number]

export interface ChainSpan {
  first_sequence: number
  last_sequence: number
  anchor_prev_hash: string
  head_hash: string
}

export interface InclusionProofEntry {
  leaf_index: number
  audit_path: string[]
}

export interface PackageTimestamp {
  merkle_root: string
  tree_size: number
  timestamp: string
  tsa: string
  token: string
  consistency_proof: string[]
}

/** A service event in `keys` or `erasures`, with its inclusion proof in the package's tree. */
export interface ProvenEvent {
  event: StoredEvent
  proof: InclusionProofEntry
}

/** An event of `audit-trail:keys` in a package's `keys` (docs/verification.md 8). */
export type PackageKeyEntry = ProvenEvent
/** An erasure event in a package's `erasures` (docs/verification.md 10). */
export type PackageErasure = ProvenEvent

export interface EvidencePackage {
  format: typeof PACKAGE_FORMAT
  version: PackageVersion
  generated_at: string
  filters: EventFilter
  merkle: {algorithm: 'rfc9162-sha256'; tree_size: number; root: string}
  events: StoredEvent[]
  chains: Record<string, ChainSpan>
  proofs: Record<string, InclusionProofEntry>
  timestamp: PackageTimestamp | null
  tsa_certificates: string[]
  /** Absent in packages written before checkpoints existed: read as null. */
  checkpoint?: PackageCheckpoint | null
  /** `export --receipts`: a COSE Receipt (RFC 9942) per event, base64, by event id. */
  receipts?: Record<string, string>
  /** The whole chain of `audit-trail:keys` up to the tree size, with proofs; absent before signatures. */
  keys?: PackageKeyEntry[]
  /** The erasure events the events name, with their proofs; absent: none. */
  erasures?: PackageErasure[]
}
