/**
 * COSE Receipts of inclusion for the RFC9162_SHA256 verifiable data structure (RFC 9942 section
 * 3.2): a COSE_Sign1 whose protected header holds `alg`, `kid` and `vds` = 1, whose unprotected
 * header holds `vdp` = {-1: [bstr .cbor [tree_size, leaf_index, inclusion_path]]}, and whose
 * detached payload is the root of the tree of tree_size leaves. A verifier recomputes the root
 * from the entry's leaf hash and the path (RFC 9162 section 2.1.3.2), then checks the signature
 * over it: a receipt that verifies proves the entry is in the tree the log signed.
 */
import {MerkleError, rootFromInclusionProof} from '../merkle/index.js'
import {cborHead, decodeCbor, encodeCbor} from './cbor.js'
import {CoseError} from './errors.js'
import {coseKeyThumbprint} from './key-set.js'
import {ALG, COSE_SIGN1_TAG, decodeSign1, HEADER, sigStructure, verifySign1, type Sign1} from './sign1.js'

/** RFC 9942 section 3.1: the COSE Verifiable Data Structure RFC9162_SHA256. */
const VDS_RFC9162_SHA256 = 1
/** RFC 9942 section 3.2: the proof type "inclusion" in `vdp`. */
export const VDP_INCLUSION = -1
/** CWT claim `iss` (RFC 8392 section 3.1.1) inside header 15 (RFC 9597). */
export const CWT_ISS = 1
export const CWT_SUB = 2
/**
 * RFC 9942 signs only the root: tree_size and leaf_index travel unprotected, and one path can lead
 * to the same root for several tree sizes. Our receipts repeat tree_size in this protected header
 * parameter, a private-use label (RFC 9052 section 16.2: below -65536), so that it is signed too;
 * for a given size the path then fixes the leaf index, as each leaf's way to the root differs.
 * Verifiers that do not know the label still check the RFC 9942 part.
 */
const HEADER_TREE_SIZE = -65537

interface InclusionProof {
  treeSize: number
  leafIndex: number
  path: Uint8Array[]
}

interface DecodedReceipt {
  sign1: Sign1
  kid: Uint8Array
  /** The CWT `iss` claim of the protected header, when there is one. */
  issuer?: string
  proofs: InclusionProof[]
}

interface VerifiedReceipt extends InclusionProof {
  root: Uint8Array
  kid: Uint8Array
  issuer?: string
  /** Whether tree_size is signed (HEADER_TREE_SIZE), not only stated. */
  treeSizeSigned: boolean
}

/** The protected header of our receipts; keys in deterministic order once encoded. */
function receiptHeader(treeSize: number, kid: Uint8Array, issuer: string | undefined): Map<number, unknown> {
  const header = new Map<number, unknown>([
    [HEADER.alg, ALG.EdDSA],
    [HEADER.kid, kid],
    [HEADER.vds, VDS_RFC9162_SHA256],
    [HEADER_TREE_SIZE, treeSize],
  ])
  if (issuer !== undefined) header.set(HEADER.cwtClaims, new Map([[CWT_ISS, issuer]]))
  return header
}

interface ReceiptSigner {
  kid: Uint8Array
  /** The log's origin, the CWT `iss`. */
  issuer?: string
  sign: (toBeSigned: Uint8Array) => Uint8Array
}

const MAJOR_UINT = 0
const MAJOR_BSTR = 2
const MAJOR_ARRAY = 4
const MAJOR_TAG = 6

/** `bstr .cbor [tree_size, leaf_index, [+ bstr]]` (RFC 9942 section 3.2), from heads and bytes. */
function encodedInclusionProof(treeSize: number, leafIndex: number, path: readonly Uint8Array[]): Buffer {
  const parts: Uint8Array[] = [
    cborHead(MAJOR_ARRAY, 3),
    cborHead(MAJOR_UINT, treeSize),
    cborHead(MAJOR_UINT, leafIndex),
  ]
  parts.push(cborHead(MAJOR_ARRAY, path.length))
  for (const hash of path) parts.push(cborHead(MAJOR_BSTR, hash.length), hash)
  const item = Buffer.concat(parts)
  return Buffer.concat([cborHead(MAJOR_BSTR, item.length), item])
}

/**
 * Receipts for the leaves of one tree (size, root). Only the root is signed (the payload), so the
 * protected header and the signature are made once, with cbor2, and each receipt puts its
 * inclusion proof between them: `18([protected, {396: {-1: [proof]}}, nil, signature])`, the
 * bytes encodeSign1 gives (tests hold the two equal).
 */
export function treeReceipts(
  treeSize: number,
  root: Uint8Array,
  signer: ReceiptSigner,
): (leafIndex: number, path: readonly Uint8Array[]) => Buffer {
  const protectedBytes = encodeCbor(receiptHeader(treeSize, signer.kid, signer.issuer))
  const signature = signer.sign(sigStructure(protectedBytes, root))
  // 18([protected, {396: {-1: [ -- and -- ]}, nil, signature]), each piece by cbor2.
  const before = Buffer.concat([
    cborHead(MAJOR_TAG, COSE_SIGN1_TAG),
    cborHead(MAJOR_ARRAY, 4),
    encodeCbor(protectedBytes),
    // {396: {-1: []}} without its last byte, the head of the empty array: then an array of one.
    encodeCbor(new Map([[HEADER.vdp, new Map([[VDP_INCLUSION, []]])]])).subarray(0, -1),
    cborHead(MAJOR_ARRAY, 1),
  ])
  const after = Buffer.concat([encodeCbor(null), encodeCbor(signature)])
  return (leafIndex, path) => Buffer.concat([before, encodedInclusionProof(treeSize, leafIndex, path), after])
}

/**
 * A receipt for the leaf `proof.leafIndex` of the tree whose root is `root`, signed with Ed25519
 * by `sign` under `kid`; `issuer` (the log's origin) goes into the CWT claims.
 */
export function buildReceipt(proof: InclusionProof, root: Uint8Array, signer: ReceiptSigner): Uint8Array {
  return treeReceipts(proof.treeSize, root, signer)(proof.leafIndex, proof.path)
}

const isUint = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0

function decodeInclusionProof(bytes: unknown): InclusionProof {
  if (!(bytes instanceof Uint8Array)) throw new CoseError('malformed', 'an inclusion proof is not a byte string')
  let item: unknown
  try {
    item = decodeCbor(bytes)
  } catch (error) {
    // decodeCbor refuses with CoseError malformed only.
    if (error instanceof CoseError) throw new CoseError('malformed', `an inclusion proof is ${error.message}`)
    throw error
  }
  const [treeSize, leafIndex, path] = Array.isArray(item) ? item : []
  if (
    !Array.isArray(item) ||
    item.length !== 3 ||
    !isUint(treeSize) ||
    !isUint(leafIndex) ||
    !Array.isArray(path) ||
    !path.every((hash: unknown) => hash instanceof Uint8Array && hash.length === 32)
  )
    throw new CoseError('malformed', 'an inclusion proof is not [tree_size, leaf_index, [32-byte hashes]]')
  return {treeSize, leafIndex, path: path as Uint8Array[]}
}

/** Decodes a receipt and checks its form: RFC9162_SHA256, a `kid`, inclusion proofs (any `alg`). */
export function decodeReceipt(bytes: Uint8Array): DecodedReceipt {
  const sign1 = decodeSign1(bytes)
  const header = sign1.protectedHeader
  const vds = header.get(HEADER.vds)
  if (vds === undefined) throw new CoseError('malformed', 'the protected header has no vds (395): not a COSE Receipt')
  if (vds !== VDS_RFC9162_SHA256)
    throw new CoseError('unsupported', `vds ${String(vds)} is not RFC9162_SHA256 (1), the only one checked here`)
  const kid = header.get(HEADER.kid)
  if (!(kid instanceof Uint8Array)) throw new CoseError('malformed', 'the protected header has no kid byte string')
  const claims = header.get(HEADER.cwtClaims)
  const issuer = claims instanceof Map ? claims.get(CWT_ISS) : undefined
  if (issuer !== undefined && typeof issuer !== 'string')
    throw new CoseError('malformed', 'the CWT claim iss is not a text string')
  const vdp = sign1.unprotectedHeader.get(HEADER.vdp)
  const proofs = vdp instanceof Map ? vdp.get(VDP_INCLUSION) : undefined
  if (!Array.isArray(proofs) || proofs.length === 0)
    throw new CoseError('malformed', 'the unprotected header has no inclusion proofs (vdp 396, -1)')
  return {sign1, kid, ...(issuer === undefined ? {} : {issuer}), proofs: proofs.map(decodeInclusionProof)}
}

/**
 * What a receipt says of the entry whose leaf hash is `leafHash` (RFC 9162: SHA-256(0x00 || d)),
 * checked without a key: its one inclusion proof, for the tree size it signs, leads from the leaf
 * to `root`, and an attached payload is that root. The signature is verifyReceipt's.
 */
export function receiptInclusion(bytes: Uint8Array, leafHash: Uint8Array): {receipt: DecodedReceipt} & VerifiedReceipt {
  const receipt = decodeReceipt(bytes)
  if (receipt.proofs.length !== 1)
    throw new CoseError('unsupported', `the receipt holds ${receipt.proofs.length} inclusion proofs; one is checked`)
  const proof = receipt.proofs[0]!
  const signedSize = receipt.sign1.protectedHeader.get(HEADER_TREE_SIZE)
  if (signedSize !== undefined && signedSize !== proof.treeSize) {
    throw new CoseError(
      'invalid_proof',
      `the inclusion proof says a tree of ${proof.treeSize} leaves; the signed tree size is ${String(signedSize)}`,
    )
  }
  let root: Uint8Array
  try {
    root = rootFromInclusionProof(proof.leafIndex, proof.treeSize, leafHash, proof.path)
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    throw new CoseError('invalid_proof', `the inclusion proof is not valid: ${error.message}`)
  }
  // An attached payload must be the root the proof gives; a detached one is that root.
  const attached = receipt.sign1.payload
  if (attached !== null && !Buffer.from(attached).equals(root))
    throw new CoseError('invalid_proof', 'the attached payload is not the root the inclusion proof leads to')
  const issuer = receipt.issuer === undefined ? {} : {issuer: receipt.issuer}
  return {receipt, ...proof, root, kid: receipt.kid, ...issuer, treeSizeSigned: signedSize !== undefined}
}

/**
 * Verifies a receipt for the entry whose leaf hash is `leafHash` with the log's Ed25519 key: the
 * inclusion of receiptInclusion, `alg` EdDSA, the `kid` the key's RFC 9679 thumbprint, and the
 * signature over the root the proof leads to.
 */
export function verifyReceipt(
  bytes: Uint8Array,
  leafHash: Uint8Array,
  key: {publicKey: Uint8Array; verify: (message: Uint8Array, signature: Uint8Array) => boolean},
): VerifiedReceipt {
  const {receipt, ...verified} = receiptInclusion(bytes, leafHash)
  const alg = receipt.sign1.protectedHeader.get(HEADER.alg)
  if (alg !== ALG.EdDSA) throw new CoseError('unsupported', `alg ${String(alg)} is not EdDSA (-8), the log's algorithm`)
  const expectedKid = coseKeyThumbprint(key.publicKey)
  if (!expectedKid.equals(receipt.kid)) {
    throw new CoseError(
      'unknown_key',
      `the receipt's kid ${Buffer.from(receipt.kid).toString('hex')} is not the given key's ` +
        `(${expectedKid.toString('hex')}, its RFC 9679 thumbprint)`,
    )
  }
  const valid =
    receipt.sign1.payload === null
      ? verifySign1(receipt.sign1, key.verify, verified.root)
      : verifySign1(receipt.sign1, key.verify)
  if (!valid) {
    throw new CoseError(
      'bad_signature',
      `the signature does not verify over the root ${Buffer.from(verified.root).toString('hex')} of the tree of ` +
        `${verified.treeSize} leaves: a wrong entry, tree or key, or a receipt altered`,
    )
  }
  return verified
}
