/**
 * Logs of events in commitment form (docs/verification.md 2), built with the canonicalize package
 * and node:crypto rather than the code under test, and evidence packages over them.
 */
import {createHash} from 'node:crypto'
import canonicalize from 'canonicalize'
import {ChainSpanCollector, type EvidencePackage} from '../../../src/core/evidence/package.js'
import {MerkleTree} from '../../../src/core/merkle/index.js'
import {GENESIS_HASH, type Json, type PayloadMemberName, type StoredEvent} from '../../../src/core/types.js'

export const MEMBERS: readonly PayloadMemberName[] = ['input', 'output', 'metadata', 'error']

const sha256 = (...parts: Buffer[]) => {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(part)
  return hash.digest('hex')
}

/** SHA-256(salt || JCS(value)) as docs/verification.md 2 writes it. */
export function referenceCommitment(saltHex: string, value: unknown): string {
  return sha256(Buffer.from(saltHex, 'hex'), Buffer.from(canonicalize(value)!, 'utf8'))
}

/** The event hash of docs/verification.md 2, step by step. */
export function referenceEventHash(event: StoredEvent): string {
  const {hash: _h, index: _i, salts: _s, erased: _e, redacted: _r, ...form} = event
  const record = form as Record<string, unknown>
  if (event.commitments !== undefined) for (const m of MEMBERS) delete record[m]
  return sha256(Buffer.from(canonicalize(record)!, 'utf8'))
}

export interface EventSpec {
  agent: string
  payload: Partial<Record<PayloadMemberName, Json>>
  /** 64 hex characters per member; derived from the index when absent. */
  salts?: Partial<Record<PayloadMemberName, string>>
  metadataOnly?: boolean
}

/** A valid log of committed events, chained per agent, indexes 0..n-1. */
export function buildCommittedLog(specs: readonly EventSpec[]): StoredEvent[] {
  const heads = new Map<string, {sequence: number; hash: string}>()
  return specs.map((spec, index) => {
    const head = heads.get(spec.agent) ?? {sequence: 0, hash: GENESIS_HASH}
    const members = MEMBERS.filter((m) => spec.payload[m] !== undefined)
    const event: Record<string, unknown> = {
      id: `00000000-0000-7000-8000-${String(index).padStart(12, '0')}`,
      agent_id: spec.agent,
      action_type: spec.agent === 'audit-trail:erasures' ? 'ERASURE' : 'TOOL_CALL',
      action_name: spec.agent === 'audit-trail:erasures' ? 'payload.erase' : `step-${index}`,
      action_status: 'success',
      timestamp: new Date(Date.UTC(2026, 10, 28, 10, 0, index)).toISOString(),
      labels: {n: String(index % 3)},
      ...spec.payload,
    }
    if (members.length > 0) {
      const salts: Record<string, string> = {}
      const commitments: Record<string, string> = {}
      for (const m of members) {
        salts[m] = spec.salts?.[m] ?? sha256(Buffer.from(`salt ${index} ${m}`))
        commitments[m] = referenceCommitment(salts[m]!, spec.payload[m])
      }
      event.salts = salts
      event.commitments = commitments
    }
    Object.assign(event, {
      sequence: head.sequence + 1,
      prev_hash: head.hash,
      recorded_at: new Date(Date.UTC(2026, 10, 28, 10, 1, index)).toISOString(),
    })
    const stored = {...event, hash: '', index} as unknown as StoredEvent
    stored.hash = referenceEventHash(stored)
    heads.set(spec.agent, {sequence: head.sequence + 1, hash: stored.hash})
    return stored
  })
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

/**
 * An unfiltered package of `events` as export writes it, with `erasures` for the erasure events
 * given (their proofs in the same tree).
 */
export function packageOf(events: StoredEvent[], erasures: StoredEvent[] = []): EvidencePackage {
  const tree = new MerkleTree()
  for (const event of events) tree.appendHex(event.hash)
  const spans = new ChainSpanCollector()
  for (const event of events) spans.add(event)
  const proofOf = (e: StoredEvent) => ({leaf_index: e.index, audit_path: tree.inclusionProof(e.index).map(hex)})
  return {
    format: 'atrail-evidence',
    version: 2,
    generated_at: '2026-11-28T18:00:00.000Z',
    filters: {},
    merkle: {algorithm: 'rfc9162-sha256', tree_size: events.length, root: hex(tree.root())},
    events,
    chains: spans.toObject(),
    proofs: Object.fromEntries(events.map((e) => [e.id, proofOf(e)])),
    timestamp: null,
    tsa_certificates: [],
    checkpoint: null,
    erasures: erasures.map((event) => ({event, proof: proofOf(event)})),
  } as EvidencePackage
}
