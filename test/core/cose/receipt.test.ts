import {createHash, verify as nodeVerify, createPublicKey} from 'node:crypto'
import {expect} from 'chai'
import {ed25519FromSeed, ed25519Verifier, sha256} from '../../../src/core/crypto.js'
import {
  buildReceipt,
  cborHead,
  CoseError,
  coseKeyThumbprint,
  decodeReceipt,
  encodeCbor,
  encodeSign1,
  HEADER,
  treeReceipts,
  VDP_INCLUSION,
  verifyReceipt,
} from '../../../src/core/cose/index.js'
import {hashLeaf, MerkleTree} from '../../../src/core/merkle/index.js'
import {referencePath, referenceRoot} from '../merkle/reference.js'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')

/**
 * The RFC 9942 example receipt of inclusion (section 3.2 shows it elided): the whole bytes as the
 * COSE working group publishes them with the RFC's source, examples/inclusion-receipt.cbor of
 * github.com/cose-wg/draft-ietf-cose-merkle-tree-proofs (ES256, kid "test-key-1", tree size 5,
 * leaf 3, three path hashes).
 */
const RFC9942_EXAMPLE = hex(`
  d2 84 58 40 a4 01 26 04 4a 74 65 73 74 2d 6b 65 79 2d 31 19 01 8b 01 0f a1 01 78 28 68 74 74 70 73 3a 2f 2f
  74 72 61 6e 73 70 61 72 65 6e 63 79 2d 73 65 72 76 69 63 65 2e 65 78 61 6d 70 6c 65 2e 63 6f 6d a1 19 01 8c
  a1 20 81 58 6a 83 05 03 83 58 20 3d 06 45 5d d3 3d a4 e9 bb d8 09 06 77 a2 d0 95 5e 6d ff e4 b9 20 69 60 5a
  46 89 20 d1 19 80 95 58 20 33 a5 21 17 19 e0 62 38 a1 91 c7 24 4a 76 33 18 7d a2 c9 aa a5 bc 6d ec 54 e2 cb
  b4 98 25 54 34 58 20 4d 75 74 2d 9e a0 2f 77 67 dc d5 54 a7 87 8f f2 2c db 20 8b e9 f3 d3 5f 7a a7 70 0b 57
  e7 41 c0 f6 58 40 34 e8 10 08 fb 0e 4e 52 16 57 66 87 45 45 0d f6 08 d0 e5 c0 15 df fc 5d 60 7d d7 82 36 c2
  90 8f 4e 2b 64 38 17 d9 19 1d 0a bd 7c 07 4a ff 2b 1b fd a5 19 ab 3f ab 21 0f f2 e0 a1 de 27 5d e6 a7`)

/** RFC 8032 section 7.1 test 1 and test 2 keys: fixed, so the receipts below are too. */
const LOG = ed25519FromSeed(hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'))
const OTHER = ed25519FromSeed(hex('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb'))
const ORIGIN = 'log.example/audit'

const keyOf = (key: typeof LOG) => ({publicKey: key.publicKey, verify: ed25519Verifier(key.publicKey)})
const signerOf = (key: typeof LOG, kid = coseKeyThumbprint(key.publicKey)) => ({kid, issuer: ORIGIN, sign: key.sign})

/** Leaf data d_i: 32 bytes each, as the log's leaves (event hashes) are. */
const leaves = Array.from({length: 300}, (_, i) => sha256(`leaf ${i}`))
const tree = new MerkleTree()
for (const leaf of leaves) tree.append(leaf)

/** One signature per tree (RFC 9942 signs the root only), as the log makes them. */
const byTree = new Map<number, ReturnType<typeof treeReceipts>>()
function receiptFor(index: number, size: number, signer?: ReturnType<typeof signerOf>): Uint8Array {
  const path = tree.inclusionProof(index, size)
  if (signer) return buildReceipt({treeSize: size, leafIndex: index, path}, tree.rootAt(size), signer)
  if (!byTree.has(size)) byTree.set(size, treeReceipts(size, tree.rootAt(size), signerOf(LOG)))
  return byTree.get(size)!(index, path)
}

function coseErrorOf(fn: () => unknown): CoseError {
  try {
    fn()
  } catch (error) {
    if (error instanceof CoseError) return error
    throw new Error(`expected a CoseError, got ${String(error)}`, {cause: error})
  }
  throw new Error('expected a CoseError, the receipt verified')
}

/** The same receipt with its one inclusion proof replaced (the signature kept). */
function withProof(receipt: Uint8Array, proof: unknown[]): Uint8Array {
  const {sign1} = decodeReceipt(receipt)
  const unprotectedHeader = new Map([[HEADER.vdp, new Map([[VDP_INCLUSION, [encodeCbor(proof)]]])]])
  return encodeSign1({...sign1, unprotectedHeader})
}

describe('COSE Receipts of inclusion (RFC 9942, RFC9162_SHA256)', function () {
  this.timeout(120_000)

  it('decodes the RFC example receipt and encodes it again byte for byte', () => {
    const receipt = decodeReceipt(RFC9942_EXAMPLE)
    expect(Buffer.from(receipt.kid).toString()).to.equal('test-key-1')
    expect(receipt.issuer).to.equal('https://transparency-service.example.com')
    expect(receipt.sign1.protectedHeader.get(HEADER.alg)).to.equal(-7)
    expect(receipt.sign1.payload).to.equal(null)
    expect(receipt.proofs).to.have.length(1)
    const [proof] = receipt.proofs
    expect([proof!.treeSize, proof!.leafIndex, proof!.path.length]).to.deep.equal([5, 3, 3])
    expect(Buffer.from(proof!.path[0]!).toString('hex')).to.equal(
      '3d06455dd33da4e9bbd8090677a2d0955e6dffe4b92069605a468920d1198095',
    )
    // The outer structure is deterministic CBOR: encoding the decoded receipt gives its bytes back
    // (the protected header travels as the bytes signed; the example's is in another key order).
    expect(Buffer.from(encodeSign1(receipt.sign1)).toString('hex')).to.equal(RFC9942_EXAMPLE.toString('hex'))
    const proofBytes = (receipt.sign1.unprotectedHeader.get(HEADER.vdp) as Map<number, Uint8Array[]>).get(-1)![0]!
    expect(Buffer.from(encodeCbor([5, 3, proof!.path]))).to.deep.equal(Buffer.from(proofBytes))
    // ES256 is not the log's algorithm: the verifier says so rather than reading on.
    expect(coseErrorOf(() => verifyReceipt(RFC9942_EXAMPLE, new Uint8Array(32), keyOf(LOG))).code).to.equal(
      'unsupported',
    )
  })

  it('writes the bytes RFC 9052 and RFC 9942 specify, checked by hand with node:crypto', () => {
    const receipt = Buffer.from(receiptFor(0, 1))
    const x = LOG.publicKey
    // RFC 9679: SHA-256 of the deterministic COSE_Key {1: 1 (OKP), -1: 6 (Ed25519), -2: x}.
    const kid = createHash('sha256')
      .update(Buffer.concat([hex('a3 01 01 20 06 21 58 20'), x]))
      .digest()
    // {1: -8, 4: kid, 15: {1: origin}, 395: 1} with the keys in bytewise order (RFC 8949 4.2.1).
    const protectedHeader = Buffer.concat([
      hex('a5 01 27 04 58 20'),
      kid,
      hex('0f a1 01 71'),
      Buffer.from(ORIGIN),
      hex('19 01 8b 01'),
      // -65537 (private use): tree_size, signed too.
      hex('3a 00 01 00 00 01'),
    ])
    expect(protectedHeader.length).to.equal(0x45)
    // unprotected {396: {-1: [<<[1, 0, []]>>]}} (the bstr holds 83 01 00 80), payload nil, a 64-byte signature.
    const expectedStart = Buffer.concat([
      hex('d2 84 58 45'),
      protectedHeader,
      hex('a1 19 01 8c a1 20 81 44 83 01 00 80 f6 58 40'),
    ])
    expect(receipt.subarray(0, expectedStart.length).toString('hex')).to.equal(expectedStart.toString('hex'))
    expect(receipt.length).to.equal(expectedStart.length + 64)
    // Sig_structure ["Signature1", protected, h'', root] (RFC 9052 4.4), with the root of the
    // one-leaf tree, SHA-256(0x00 || d0), as the detached payload.
    const root = createHash('sha256')
      .update(Buffer.concat([hex('00'), leaves[0]!]))
      .digest()
    const toBeSigned = Buffer.concat([
      hex('84 6a'),
      Buffer.from('Signature1'),
      hex('58 45'),
      protectedHeader,
      hex('40 58 20'),
      root,
    ])
    const publicKey = createPublicKey({key: {kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url')}, format: 'jwk'})
    expect(nodeVerify(null, toBeSigned, publicKey, receipt.subarray(expectedStart.length))).to.equal(true)
  })

  it('verifies for every leaf of trees of 1 to 300 leaves, with the path of the naive reference', () => {
    const verifyKey = keyOf(LOG)
    // Every shape up to 96 leaves (past the 64 of a full level), then every 23rd size and 300.
    for (let size = 1; size <= 300; size++) {
      if (size > 96 && size % 23 !== 0 && size !== 300) continue
      for (let index = 0; index < size; index++) {
        const receipt = receiptFor(index, size)
        const verified = verifyReceipt(receipt, hashLeaf(leaves[index]!), verifyKey)
        if (verified.treeSize !== size || verified.leafIndex !== index)
          expect.fail(`receipt ${index}/${size} names ${verified.leafIndex}/${verified.treeSize}`)
        // Every path of trees up to 64 leaves, and of the largest, against RFC 9162 transcribed literally.
        if (size <= 64 || size === 300) {
          const path = decodeReceipt(receipt).proofs[0]!.path.map((h) => Buffer.from(h).toString('hex'))
          const expected = referencePath(index, leaves.slice(0, size)).map((h) => h.toString('hex'))
          if (path.join() !== expected.join()) expect.fail(`the path of leaf ${index} of ${size} is not RFC 9162's`)
          if (size === 300 && index === 0)
            expect(Buffer.from(verified.root)).to.deep.equal(referenceRoot(leaves.slice(0, size)))
        }
      }
    }
  })

  it('fails with any flipped byte', () => {
    for (const [index, size] of [
      [0, 1],
      [6, 7],
      [137, 300],
    ] as const) {
      const receipt = receiptFor(index, size)
      const leafHash = hashLeaf(leaves[index]!)
      for (let at = 0; at < receipt.length; at++) {
        const flipped = Buffer.from(receipt)
        flipped[at]! ^= 0x01
        let accepted = false
        try {
          verifyReceipt(flipped, leafHash, keyOf(LOG))
          accepted = true
        } catch (error) {
          if (!(error instanceof CoseError)) throw error
        }
        if (accepted) expect.fail(`receipt ${index}/${size} with byte ${at} flipped verified`)
      }
    }
  })

  it('fails for a wrong leaf, a wrong tree size, another key, and a kid that is not the signer', () => {
    for (let size = 2; size <= 300; size += 7) {
      for (const index of [0, size >> 1, size - 1]) {
        const receipt = receiptFor(index, size)
        const leafHash = hashLeaf(leaves[index]!)
        const other = (index + 1) % size
        expect(['invalid_proof', 'bad_signature']).to.include(
          coseErrorOf(() => verifyReceipt(receipt, hashLeaf(leaves[other]!), keyOf(LOG))).code,
        )
        const path = tree.inclusionProof(index, size)
        for (const wrongSize of [size - 1, size + 1, size * 2]) {
          const changed = withProof(receipt, [wrongSize, index, path])
          expect(['invalid_proof', 'bad_signature']).to.include(
            coseErrorOf(() => verifyReceipt(changed, leafHash, keyOf(LOG))).code,
            `size ${wrongSize} instead of ${size}`,
          )
        }
        expect(coseErrorOf(() => verifyReceipt(receipt, leafHash, keyOf(OTHER))).code).to.equal('unknown_key')
        // Signed by the log key but naming the other key: the other key's signature check fails.
        const misnamed = receiptFor(index, size, signerOf(LOG, coseKeyThumbprint(OTHER.publicKey)))
        expect(coseErrorOf(() => verifyReceipt(misnamed, leafHash, keyOf(OTHER))).code).to.equal('bad_signature')
      }
    }
  })

  it('assembles per-leaf receipts to the bytes cbor2 gives the whole COSE_Sign1', () => {
    // Heads at every boundary of the preferred serialization (RFC 8949 4.2.1).
    for (const n of [0, 23, 24, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
      expect(cborHead(0, n).toString('hex'), `uint ${n}`).to.equal(Buffer.from(encodeCbor(n)).toString('hex'))
      if (n <= 65536) {
        const bytes = new Uint8Array(n)
        expect(cborHead(2, n).toString('hex'), `bstr ${n}`).to.equal(
          Buffer.from(encodeCbor(bytes))
            .subarray(0, -n || undefined)
            .toString('hex'),
        )
      }
    }
    for (const [index, size] of [
      [0, 1],
      [22, 23],
      [23, 24],
      [200, 300],
    ] as const) {
      const receipt = receiptFor(index, size)
      const {sign1} = decodeReceipt(receipt)
      const proof = encodeCbor([size, index, tree.inclusionProof(index, size)])
      const whole = encodeSign1({
        ...sign1,
        unprotectedHeader: new Map([[HEADER.vdp, new Map([[VDP_INCLUSION, [proof]]])]]),
      })
      expect(Buffer.from(receipt).toString('hex'), `${index}/${size}`).to.equal(Buffer.from(whole).toString('hex'))
    }
    // Past the sizes a test tree reaches: the same for large sizes and indexes (the path is any 32-byte hashes).
    const path = Array.from({length: 33}, (_, i) => sha256(`node ${i}`))
    for (const size of [65536, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]) {
      const receipt = buildReceipt({treeSize: size, leafIndex: size - 1, path}, sha256('root'), signerOf(LOG))
      const {sign1} = decodeReceipt(receipt)
      const whole = encodeSign1({
        ...sign1,
        unprotectedHeader: new Map([[HEADER.vdp, new Map([[VDP_INCLUSION, [encodeCbor([size, size - 1, path])]]])]]),
      })
      expect(Buffer.from(receipt).toString('hex')).to.equal(Buffer.from(whole).toString('hex'))
    }
  })

  it('binds the leaf index through the signed tree size: another index with the same path fails', () => {
    for (const size of [2, 3, 5, 8, 13, 100, 300]) {
      for (let index = 0; index < size; index += Math.max(1, size >> 3)) {
        const receipt = receiptFor(index, size)
        const path = tree.inclusionProof(index, size)
        for (let other = 0; other < size; other++) {
          if (other === index) continue
          const moved = withProof(receipt, [size, other, path])
          let accepted = false
          try {
            verifyReceipt(moved, hashLeaf(leaves[index]!), keyOf(LOG))
            accepted = true
          } catch (error) {
            if (!(error instanceof CoseError)) throw error
          }
          if (accepted) expect.fail(`the path of leaf ${index} of ${size} verified as leaf ${other}`)
        }
      }
    }
  })

  it('refuses receipts of another structure or with malformed proofs', () => {
    const receipt = receiptFor(3, 9)
    const leafHash = hashLeaf(leaves[3]!)
    const path = tree.inclusionProof(3, 9)
    const cases: Array<[string, Uint8Array, string]> = [
      ['a proof of three items that are not numbers', withProof(receipt, ['9', 3, path]), 'malformed'],
      ['a path hash of 31 bytes', withProof(receipt, [9, 3, [...path.slice(1), new Uint8Array(31)]]), 'malformed'],
      ['a leaf index past the tree', withProof(receipt, [9, 9, path]), 'invalid_proof'],
      ['a path one hash short', withProof(receipt, [9, 3, path.slice(1)]), 'invalid_proof'],
    ]
    for (const [what, bytes, code] of cases)
      expect(coseErrorOf(() => verifyReceipt(bytes, leafHash, keyOf(LOG))).code, what).to.equal(code)
  })
})
