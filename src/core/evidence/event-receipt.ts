/**
 * `verify --receipt FILE --event FILE --log-key VKEY`: one event and its COSE Receipt, checked
 * offline with nothing but the log's verifier key (docs/verification.md, "Receipts"). The event's
 * hash is recomputed from its content (docs/verification.md, section 2), its leaf is SHA-256(0x00 ||
 * hash) (section 5), and the receipt must prove that leaf at the event's index under the log key's signature.
 */
import {ed25519Verifier} from '../crypto.js'
import {CoseError, decodeReceipt, verifyReceipt} from '../cose/index.js'
import {commitmentFault, computeEventHash, hashedContentOf} from '../event/index.js'
import {hashLeaf} from '../merkle/index.js'
import {parseVerifierKey} from '../note/index.js'
import type {StoredEvent} from '../types.js'

export interface ReceiptVerification {
  valid: boolean
  event_id: string
  leaf_index?: number
  tree_size?: number
  /** The root the receipt signs, hex. */
  root?: string
  /** The receipt's kid, hex (the RFC 9679 thumbprint of the log key). */
  kid?: string
  issuer?: string
  failure?: {check: 'event_hash' | 'receipt'; message: string}
}

const HEX64 = /^[0-9a-f]{64}$/

/** Throws TypeError for an `event` that is no stored event (an input error, not a failed check). */
export function verifyEventReceipt(event: unknown, receipt: Uint8Array, logKey: string): ReceiptVerification {
  const stored = event as StoredEvent
  if (
    stored === null ||
    typeof stored !== 'object' ||
    Array.isArray(stored) ||
    typeof stored.id !== 'string' ||
    typeof stored.hash !== 'string' ||
    !HEX64.test(stored.hash) ||
    !Number.isSafeInteger(stored.index)
  )
    throw new TypeError('the event file does not hold a stored event (with id, hash and index)')
  const key = parseVerifierKey(logKey)
  const result: ReceiptVerification = {valid: false, event_id: stored.id}
  const recomputed = computeEventHash(hashedContentOf(stored))
  if (recomputed !== stored.hash) {
    const message = `event ${stored.id} does not match its hash: its content hashes to ${recomputed}`
    return {...result, failure: {check: 'event_hash', message}}
  }
  const fault = commitmentFault(stored)
  if (fault) {
    const message = `event ${stored.id}: ${fault.member} does not match its commitment (docs/verification.md 2)`
    return {...result, failure: {check: 'event_hash', message}}
  }
  // A receipt of another leaf is named as such: its path, taken from this event's leaf, would
  // only lead to another root, and the signature over that root fail.
  const provenLeaf = receiptLeaf(receipt)
  if (provenLeaf !== undefined && provenLeaf !== stored.index) {
    const message = `the receipt proves leaf ${provenLeaf}, but event ${stored.id} is leaf ${stored.index}`
    return {...result, leaf_index: provenLeaf, failure: {check: 'receipt', message}}
  }
  let verified
  try {
    verified = verifyReceipt(receipt, hashLeaf(Buffer.from(stored.hash, 'hex')), {
      publicKey: key.publicKey,
      verify: ed25519Verifier(key.publicKey),
    })
  } catch (error) {
    if (!(error instanceof CoseError)) throw error
    return {...result, failure: {check: 'receipt', message: `the receipt does not verify: ${error.message}`}}
  }
  const found = {
    leaf_index: verified.leafIndex,
    tree_size: verified.treeSize,
    root: Buffer.from(verified.root).toString('hex'),
    kid: Buffer.from(verified.kid).toString('hex'),
    ...(verified.issuer === undefined ? {} : {issuer: verified.issuer}),
  }
  if (verified.leafIndex !== stored.index) {
    const message = `the receipt proves leaf ${verified.leafIndex}, but event ${stored.id} is leaf ${stored.index}`
    return {...result, ...found, failure: {check: 'receipt', message}}
  }
  return {...result, ...found, valid: true}
}

/** The leaf the receipt's one inclusion proof is for; undefined when unreadable (verifyReceipt says why). */
function receiptLeaf(receipt: Uint8Array): number | undefined {
  try {
    const proofs = decodeReceipt(receipt).proofs
    return proofs.length === 1 ? proofs[0]!.leafIndex : undefined
  } catch (error) {
    if (error instanceof CoseError) return undefined
    throw error
  }
}
