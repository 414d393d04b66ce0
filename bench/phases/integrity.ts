import {MerkleTree as MerkleTreeJs} from 'merkletreejs'
import {sha256Hex} from '../../src/core/crypto.js'
import {computeRoot, hashLeaf, MerkleTree} from '../../src/core/merkle/index.js'
import type {AuditServices} from '../../src/services/audit.js'
import {EVENTS, fmt, record, timed, timedAsync} from '../common.js'
import {besideCeiling, oneThreadCeiling} from '../verify-ceiling.js'

export async function integrity(services: AuditServices): Promise<void> {
  const ceiling = await oneThreadCeiling(services.store)
  const [result, verifyMs] = await timedAsync(() => services.integrity.verifyAll())
  if (!result.valid) throw new Error('verification failed')
  const rate = EVENTS / (verifyMs / 1000)
  record({
    what: `chain verification of all ${fmt(EVENTS)} events from stored content`,
    value: `${fmt(rate)} /s`,
    target: '>= 1.5x the one-thread ceiling',
    ceiling: besideCeiling(rate, ceiling),
  })
  const hashes = await services.store.eventHashes()
  const leaves = hashes.map((h) => Buffer.from(h, 'hex'))
  const tree = new MerkleTree()
  for (const leaf of leaves) tree.append(leaf)
  const [, appendMs] = timed(() => {
    for (let i = 0; i < 1000; i++) {
      tree.append(leaves[i]!)
      tree.root()
    }
  })
  record({
    what: 'Merkle append + root (mean of 1,000)',
    value: `${fmt((appendMs / 1000) * 1000, 1)} µs`,
    target: '< 1 ms',
  })
  const [, proofMs] = timed(() => {
    for (let i = 0; i < 1000; i++) tree.inclusionProof(Math.floor(Math.random() * EVENTS), EVENTS)
  })
  record({what: 'inclusion proof (mean of 1,000)', value: `${fmt((proofMs / 1000) * 1000, 1)} µs`, target: '< 1 ms'})
  const [, consistencyMs] = timed(() => {
    for (let i = 0; i < 1000; i++) tree.consistencyProof(Math.floor(Math.random() * EVENTS), EVENTS)
  })
  // merkletreejs configured as RFC 9162 (0x00 leaves given pre-hashed, 0x01 node prefix), the same leaves.
  const sample = leaves.slice(0, Math.min(leaves.length, 100_000))
  const [, oursSampleMs] = timed(() => computeRoot(sample))
  const [jsTree, jsMs] = timed(
    () =>
      new MerkleTreeJs(
        sample.map((l) => Buffer.from(hashLeaf(l))),
        (data: Buffer) => Buffer.from(sha256Hex(data), 'hex'),
        {
          concatenator: (parts: Buffer[]) => Buffer.concat([Buffer.from([0x01]), ...parts]),
        },
      ),
  )
  if (jsTree.getRoot().toString('hex') !== Buffer.from(computeRoot(sample)).toString('hex'))
    throw new Error('merkletreejs disagrees')
  const [, jsProofMs] = timed(() => {
    for (let i = 0; i < 1000; i++) jsTree.getProof(Buffer.from(hashLeaf(sample[(i * 37) % sample.length]!)))
  })
  record({
    what: `Merkle root of ${fmt(sample.length)} leaves: ours vs merkletreejs`,
    value: `${fmt(oursSampleMs)} ms vs ${fmt(jsMs)} ms`,
    target: '-',
    ceiling: `${fmt(jsMs / oursSampleMs, 1)}x faster`,
  })
  record({
    what: `inclusion proof at ${fmt(sample.length)} leaves: merkletreejs getProof (mean of 1,000)`,
    value: `${fmt((jsProofMs / 1000) * 1000, 1)} µs`,
    target: '-',
  })
  record({what: 'consistency proof (mean of 1,000)', value: `${fmt((consistencyMs / 1000) * 1000, 1)} µs`, target: '-'})
}
