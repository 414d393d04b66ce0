/** Shared test inputs: leaf data d_i = SHA-256("leaf-<i>"), the shape of an event hash. */
import {sha256} from '../../../src/core/crypto.js'
import {MerkleTree} from '../../../src/core/merkle/index.js'

/** d_i, reproducible in a shell with `printf 'leaf-<i>' | openssl dgst -sha256 -binary`. */
export function leafData(i: number): Uint8Array {
  return sha256(`leaf-${i}`)
}

export function leafDataList(n: number): Uint8Array[] {
  return Array.from({length: n}, (_, i) => leafData(i))
}

export function treeOf(leaves: Iterable<Uint8Array>): MerkleTree {
  const tree = new MerkleTree()
  for (const leaf of leaves) tree.append(leaf)
  return tree
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex')
}

export function fromHex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'hex'))
}
