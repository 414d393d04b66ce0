/** The evidence package, `.atrail.json` (docs/verification.md). */
import type {EventFilter, StoredEvent} from '../types.js'
import type {PackageCheckpoint} from './check-checkpoint.js'
import type {PackageErasure} from './erasures.js'

export const PACKAGE_FORMAT = 'atrail-evidence'
/**
 * 2 once any event in it has commitments, erasures, redactions or a signature (docs/verification.md
 * 4); a verifier reads both.
 */
const PACKAGE_VERSIONS = [1, 2] as const
export type PackageVersion = (typeof PACKAGE_VERSIONS)[number]

/** The version a package must say it is, given one of its events. */
export function versionFor(event: StoredEvent): PackageVersion {
  const v2 = event.commitments ?? event.erased ?? event.redacted ?? event.signature
  return v2 === undefined ? 1 : 2
}

interface ChainSpan {
  first_sequence: number
  last_sequence: number
  anchor_prev_hash: string
  head_hash: string
}

export interface InclusionProofEntry {
  leaf_index: number
  audit_path: string[]
}

interface PackageTimestamp {
  merkle_root: string
  tree_size: number
  timestamp: string
  tsa: string
  token: string
  consistency_proof: string[]
}

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
  /** The key events of the package's agents with their proofs (docs/verification.md 8); absent before signatures. */
  keys?: PackageKeyEntry[]
  /** The erasure events the events name, with their proofs (erasures.ts); absent: none. */
  erasures?: PackageErasure[]
}

/** A key event in a package's `keys`, with its inclusion proof in the package's tree. */
export interface PackageKeyEntry {
  event: StoredEvent
  proof: InclusionProofEntry
}

/** Whether a parsed JSON value says it is an evidence package of this version, and has its events. */
export function isTaggedPackage(value: unknown): value is EvidencePackage {
  const pkg = value as Partial<EvidencePackage> | null
  return (
    pkg !== null &&
    typeof pkg === 'object' &&
    pkg.format === PACKAGE_FORMAT &&
    (PACKAGE_VERSIONS as readonly unknown[]).includes(pkg.version) &&
    Array.isArray(pkg.events)
  )
}

/** Builds the `chains` entry of each agent from its events, in the order they appear. */
export class ChainSpanCollector {
  private readonly spans = new Map<string, ChainSpan>()

  add(event: StoredEvent): void {
    const span = this.spans.get(event.agent_id)
    if (span) {
      span.last_sequence = event.sequence
      span.head_hash = event.hash
    } else {
      this.spans.set(event.agent_id, {
        first_sequence: event.sequence,
        last_sequence: event.sequence,
        anchor_prev_hash: event.prev_hash,
        head_hash: event.hash,
      })
    }
  }

  toObject(): Record<string, ChainSpan> {
    const out: Record<string, ChainSpan> = Object.create(null)
    for (const key of [...this.spans.keys()].sort()) out[key] = this.spans.get(key)!
    return out
  }
}
