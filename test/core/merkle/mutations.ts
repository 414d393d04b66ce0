/**
 * Corruptions of a valid proof, each of which a verifier must reject. The set follows
 * transparency-dev/merkle's corruptInclusionProof / corruptConsistencyProof (proof/verify_test.go,
 * the generator of its testdata/{inclusion,consistency}/*.json files), plus swapped elements and
 * an empty proof where one is needed.
 */

export interface InclusionCase {
  index: number
  size: number
  leafHash: Uint8Array
  proof: Uint8Array[]
  root: Uint8Array
}

export interface ConsistencyCase {
  size1: number
  size2: number
  root1: Uint8Array
  root2: Uint8Array
  proof: Uint8Array[]
}

export interface Probe<T> {
  desc: string
  probe: T
}

/** "abacaba000...060061e00123456", transparency-dev's sha256SomeHash: a hash in no tree here. */
export const someHash = Buffer.from('abacaba000000000000000000000000000000000000000000060061e00123456', 'hex')
export const emptyTreeHash = Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex')

/** A copy of `bytes` with bit `bit` (0 = most significant of byte 0) inverted. */
export function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = new Uint8Array(bytes)
  copy[bit >> 3]! ^= 0x80 >> (bit & 7)
  return copy
}

function withElement(proof: Uint8Array[], i: number, value: Uint8Array): Uint8Array[] {
  return proof.map((element, j) => (j === i ? value : element))
}

function swapped(proof: Uint8Array[], i: number, j: number): Uint8Array[] {
  return proof.map((element, k) => (k === i ? proof[j]! : k === j ? proof[i]! : element))
}

export function corruptInclusion(c: InclusionCase): Probe<InclusionCase>[] {
  const {proof, root} = c
  const probes: Probe<InclusionCase>[] = [
    {desc: 'leaf index - 1', probe: {...c, index: c.index - 1}},
    {desc: 'leaf index + 1', probe: {...c, index: c.index + 1}},
    {desc: 'leaf index ^ 2', probe: {...c, index: c.index ^ 2}},
    {desc: 'tree size * 2', probe: {...c, size: c.size * 2}},
    {desc: 'tree size / 2', probe: {...c, size: Math.floor(c.size / 2)}},
    {desc: 'wrong leaf', probe: {...c, leafHash: someHash}},
    {desc: 'wrong leaf of the wrong length', probe: {...c, leafHash: Buffer.from('WrongLeaf')}},
    {desc: 'empty root', probe: {...c, root: emptyTreeHash}},
    {desc: 'random root', probe: {...c, root: someHash}},
    {desc: 'flipped bit in the root', probe: {...c, root: flipBit(root, 5)}},
    {desc: 'flipped bit in the leaf', probe: {...c, leafHash: flipBit(c.leafHash, 255)}},
    {desc: 'trailing garbage', probe: {...c, proof: [...proof, new Uint8Array(0)]}},
    {desc: 'trailing root', probe: {...c, proof: [...proof, root]}},
    {desc: 'preceding garbage', probe: {...c, proof: [new Uint8Array(0), ...proof]}},
    {desc: 'preceding root', probe: {...c, proof: [root, ...proof]}},
  ]
  proof.forEach((element, i) => {
    probes.push({desc: `modified proof[${i}] bit 3`, probe: {...c, proof: withElement(proof, i, flipBit(element, 4))}})
  })
  if (proof.length > 0) {
    probes.push({desc: 'removed component', probe: {...c, proof: proof.slice(0, -1)}})
    probes.push({desc: 'empty proof', probe: {...c, proof: []}})
  }
  if (proof.length > 1) {
    probes.push({desc: 'inserted component', probe: {...c, proof: [proof[0]!, someHash, ...proof.slice(1)]}})
    probes.push({desc: 'swapped first two elements', probe: {...c, proof: swapped(proof, 0, 1)}})
    probes.push({desc: 'swapped first and last elements', probe: {...c, proof: swapped(proof, 0, proof.length - 1)}})
  }
  return probes
}

/** Only for non-trivial cases (0 < size1 < size2), as in transparency-dev. */
export function corruptConsistency(c: ConsistencyCase): Probe<ConsistencyCase>[] {
  const {proof, root1, root2} = c
  const probes: Probe<ConsistencyCase>[] = [
    {desc: 'size1 - 1', probe: {...c, size1: c.size1 - 1}},
    {desc: 'size1 + 1', probe: {...c, size1: c.size1 + 1}},
    {desc: 'size1 ^ 2', probe: {...c, size1: c.size1 ^ 2}},
    {desc: 'size2 * 2', probe: {...c, size2: c.size2 * 2}},
    {desc: 'size2 / 2', probe: {...c, size2: Math.floor(c.size2 / 2)}},
    {desc: 'wrong root1', probe: {...c, root1: someHash}},
    {desc: 'wrong root2', probe: {...c, root2: someHash}},
    {desc: 'wrong root1 of the wrong length', probe: {...c, root1: Buffer.from('WrongRoot')}},
    {desc: 'flipped bit in root1', probe: {...c, root1: flipBit(root1, 100)}},
    {desc: 'flipped bit in root2', probe: {...c, root2: flipBit(root2, 200)}},
    {desc: 'swapped roots', probe: {...c, root1: root2, root2: root1}},
    {desc: 'empty proof', probe: {...c, proof: []}},
    {desc: 'trailing garbage', probe: {...c, proof: [...proof, new Uint8Array(0)]}},
    {desc: 'trailing root1', probe: {...c, proof: [...proof, root1]}},
    {desc: 'trailing root2', probe: {...c, proof: [...proof, root2]}},
    {desc: 'preceding garbage', probe: {...c, proof: [new Uint8Array(0), ...proof]}},
    {desc: 'preceding root1', probe: {...c, proof: [root1, ...proof]}},
    {desc: 'preceding root2', probe: {...c, proof: [root2, ...proof]}},
    {desc: 'preceding proof[0]', probe: {...c, proof: [proof[0]!, ...proof]}},
    {desc: 'truncated proof', probe: {...c, proof: proof.slice(0, -1)}},
    {desc: 'removed first element', probe: {...c, proof: proof.slice(1)}},
    {desc: 'inserted component', probe: {...c, proof: [proof[0]!, someHash, ...proof.slice(1)]}},
  ]
  proof.forEach((element, i) => {
    probes.push({desc: `modified proof[${i}] bit 4`, probe: {...c, proof: withElement(proof, i, flipBit(element, 3))}})
  })
  if (proof.length > 1) {
    probes.push({desc: 'swapped first two elements', probe: {...c, proof: swapped(proof, 0, 1)}})
    probes.push({desc: 'swapped first and last elements', probe: {...c, proof: swapped(proof, 0, proof.length - 1)}})
  }
  return probes
}
