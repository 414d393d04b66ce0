import {expect} from 'chai'
import {ChainVerifier, type ChainInvalid} from '../../../src/core/chain/index.js'
import {ChainSpanCollector, type EvidencePackage} from '../../../src/core/evidence/package.js'
import {verifyPackage} from '../../../src/core/evidence/verify.js'
import {MerkleTree} from '../../../src/core/merkle/index.js'
import type {StoredEvent} from '../../../src/core/types.js'
import {buildLog, rehash} from '../chain/fixtures.js'

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

/** An unfiltered package over `events` as export writes it: the stored hashes are the leaves. */
function packageOf(events: StoredEvent[]): EvidencePackage {
  const tree = new MerkleTree()
  for (const event of events) tree.appendHex(event.hash)
  const spans = new ChainSpanCollector()
  for (const event of events) spans.add(event)
  const proofOf = (e: StoredEvent) => ({leaf_index: e.index, audit_path: tree.inclusionProof(e.index).map(hex)})
  const proofs = Object.fromEntries(events.map((e) => [e.id, proofOf(e)]))
  return {
    format: 'atrail-evidence',
    version: 1,
    generated_at: '2026-11-26T18:00:00.000Z',
    filters: {},
    merkle: {algorithm: 'rfc9162-sha256', tree_size: events.length, root: hex(tree.root())},
    events,
    chains: spans.toObject(),
    proofs,
    timestamp: null,
    tsa_certificates: [],
    checkpoint: null,
  } as EvidencePackage
}

function storeVerdict(events: StoredEvent[]): ChainInvalid {
  const verifier = new ChainVerifier()
  for (const event of events) verifier.add(event)
  return verifier.summary().invalid_agents[0]!
}

describe('core/evidence verifyPackage: the chain verdict of the store (docs/design.md order)', () => {
  it('accepts a valid package', async () => {
    const result = await verifyPackage(packageOf(buildLog(['a', 'b', 'a', 'a'])))
    expect(result.failure).to.equal(undefined)
    expect(result.valid).to.equal(true)
  })

  // Each event below breaks two rules at once; the first in the order sequence, genesis/link,
  // hash is the one named, by the package verifier as by GET /v1/verify.
  const cases: Array<[string, (log: StoredEvent[]) => void, string, ChainInvalid['reason']]> = [
    [
      'prev_hash rewritten without re-hashing (link and hash)',
      (log) => {
        log[2] = {...log[2]!, prev_hash: 'f'.repeat(64)}
      },
      'chain_link',
      'broken_link',
    ],
    [
      'first prev_hash rewritten without re-hashing (genesis and hash)',
      (log) => {
        log[0] = {...log[0]!, prev_hash: 'e'.repeat(64)}
      },
      'chain_link',
      'bad_genesis',
    ],
    [
      'sequence moved back and content edited (sequence and hash)',
      (log) => {
        log[3] = {...log[3]!, sequence: 1, action_name: 'edited'}
      },
      'chain_link',
      'sequence_gap',
    ],
  ]
  for (const [what, tamper, check, reason] of cases) {
    it(`${what}: ${check}/${reason}, the reason the store gives`, async () => {
      const log = buildLog(['a', 'b', 'a', 'a'])
      tamper(log)
      const result = await verifyPackage(packageOf(log))
      expect(result.valid).to.equal(false)
      expect(result.failure).to.include({check, reason})
      const store = storeVerdict(log)
      expect(store.reason).to.equal(reason)
      const expected = store.reason === 'sequence_gap' ? '> 2' : store.expected
      expect(result.failure).to.include({expected, actual: store.actual})
    })
  }

  it('a content edit alone stays an event_hash failure with the recomputed hash', async () => {
    const log = buildLog(['a', 'b', 'a'])
    log[2] = {...log[2]!, action_name: 'edited'}
    const result = await verifyPackage(packageOf(log))
    const hashes = {expected: rehash(log[2]!).hash, actual: log[2]!.hash}
    expect(result.failure).to.include({check: 'event_hash', reason: 'hash_mismatch', ...hashes})
  })
})
