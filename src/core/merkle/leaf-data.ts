/**
 * Leaf data for a bulk build of the tree (src/threads/merkle-build.ts): event hashes decoded into
 * n * 32 bytes back to back, in shared memory so that worker threads read them without a copy.
 */
import {MerkleError} from './errors.js'
import {HASH_SIZE} from './hasher.js'

/**
 * The leaf data buildTree takes, from event hashes as hex (the stored `hash` column), placed in
 * shared memory so that worker threads read it without a copy. Precondition: each is exactly 64
 * hex digits (either case), as for MerkleTree.appendHex; otherwise `invalid_argument`.
 */
export function leafDataFromHex(hashesHex: readonly string[]): Uint8Array {
  const leafData = Buffer.from(new SharedArrayBuffer(hashesHex.length * HASH_SIZE))
  hashesHex.forEach((hashHex, i) => {
    if (typeof hashHex !== 'string' || hashHex.length !== 2 * HASH_SIZE) throw badHex(i)
  })
  // A few thousand joined hashes per write() rather than one call per hash: fewer calls into
  // Buffer's decoder (docs/benchmarks.md, "Figures behind choices in the code").
  // write() stops at the first non-hex digit, so a short count means one of this chunk's hashes
  // has one.
  for (let start = 0; start < hashesHex.length; start += HEX_CHUNK) {
    const chunk = hashesHex.slice(start, start + HEX_CHUNK)
    if (leafData.write(chunk.join(''), start * HASH_SIZE, 'hex') !== chunk.length * HASH_SIZE) {
      throw badHex(start + chunk.findIndex((hashHex) => !/^[0-9a-fA-F]*$/.test(hashHex)))
    }
  }
  return leafData
}

const HEX_CHUNK = 4096

/**
 * leafDataFromHex for hashes that come as joined strings, each of `count` hashes (a store reads
 * them that way: decoding a few dozen long strings instead of a million short ones). Gives
 * undefined when a chunk is not exactly `count` 64-digit hex hashes; leafDataFromHex over the
 * single hashes then names the bad one. `capacity` is an upper bound of the total count.
 */
export async function leafDataFromHexChunks(
  chunks: AsyncIterable<{count: number; hex: string}>,
  capacity: number,
): Promise<Uint8Array | undefined> {
  const leafData = Buffer.from(new SharedArrayBuffer(capacity * HASH_SIZE))
  let offset = 0
  for await (const {count, hex} of chunks) {
    const bytes = count * HASH_SIZE
    if (hex.length !== 2 * bytes || offset + bytes > leafData.length || leafData.write(hex, offset, 'hex') !== bytes)
      return undefined
    offset += bytes
  }
  return leafData.subarray(0, offset)
}

function badHex(index: number): MerkleError {
  return new MerkleError('invalid_argument', `hash ${index} must be 64 hex digits`)
}
