/** The evidence package, `.atrail.json` (docs/verification.md). */
import type {StoredEvent} from '../types.js'
import {PACKAGE_FORMAT, PACKAGE_VERSIONS, type ChainSpan, type EvidencePackage, type PackageVersion} from './types.js'

export {PACKAGE_FORMAT}
export type {
  EvidencePackage,
  InclusionProofEntry,
  PackageErasure,
  PackageKeyEntry,
  PackageVersion,
  ProvenEvent,
} from './types.js'

/** The version a package must say it is, given one of its events. */
export function versionFor(event: StoredEvent): PackageVersion {
  const v2 = event.commitments ?? event.erased ?? event.redacted ?? event.signature
  return v2 === undefined ? 1 : 2
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
