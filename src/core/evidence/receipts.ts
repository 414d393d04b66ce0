/**
 * The package's `receipts` member (`export --receipts`): `{"<event id>": "<base64 COSE_Sign1>"}`,
 * one COSE Receipt (RFC 9942) per event, over the package's tree. Each must prove its event's leaf
 * at the event's index in the tree of `merkle.tree_size` leaves whose root is `merkle.root`; with
 * the log's verifier key (`--log-key`) its `kid` and signature are checked too, without it only
 * that (a receipt's signature can only be checked against a key obtained apart from the package).
 */
import {ed25519Verifier} from '../crypto.js'
import {CoseError, receiptInclusion, verifyReceipt} from '../cose/index.js'
import {hashLeaf} from '../merkle/index.js'
import {parseVerifierKey, strictBase64} from '../note/index.js'
import type {StoredEvent} from '../types.js'
import {fail} from './failures.js'
import type {EvidencePackage} from './types.js'

export interface ReceiptsVerdict {
  count: number
  /** Whether kid and signature were checked against the given log key. */
  signature_checked: boolean
  /** The CWT `iss` the receipts name (the log's origin). */
  issuer?: string
}

function receiptFailure(message: string, event_id?: string): never {
  fail({check: 'receipt', message, ...(event_id === undefined ? {} : {event_id})})
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Null when the package has no receipts; fails at the first one that fails. */
export function checkPackageReceipts(pkg: EvidencePackage, logKey: string | undefined): ReceiptsVerdict | null {
  const receipts = pkg.receipts
  if (receipts === undefined || receipts === null) return null
  if (!isPlainObject(receipts)) receiptFailure('receipts must be an object of event id: base64 receipt')
  const key = logKey === undefined ? undefined : parseVerifierKey(logKey)
  const verifier = key && {publicKey: key.publicKey, verify: ed25519Verifier(key.publicKey)}
  const held = Object.keys(receipts).length
  if (held !== pkg.events.length) countFailure(pkg, receipts, held)
  let issuer: string | undefined
  for (const event of pkg.events) {
    const verified = checkOne(event, Object.hasOwn(receipts, event.id) ? receipts[event.id] : undefined, pkg, verifier)
    issuer ??= verified.issuer
  }
  return {count: held, signature_checked: verifier !== undefined, ...(issuer === undefined ? {} : {issuer})}
}

/**
 * One receipt per event, no more (docs/verification.md 9): names the extra receipt (for no event of
 * the package) or the event that has none.
 */
function countFailure(pkg: EvidencePackage, receipts: Record<string, unknown>, held: number): never {
  const counts = `the package has ${held} receipts for ${pkg.events.length} events`
  const ids = new Set(pkg.events.map((event) => event.id))
  const extra = Object.keys(receipts).find((id) => !ids.has(id))
  if (extra !== undefined)
    receiptFailure(`${counts}: the receipt for ${extra} is for no event of it (an extra receipt)`)
  const missing = pkg.events.find((event) => !Object.hasOwn(receipts, event.id))
  receiptFailure(`${counts}: event ${missing?.id} has none (a missing receipt)`, missing?.id)
}

function checkOne(
  event: StoredEvent,
  text: unknown,
  pkg: EvidencePackage,
  verifier: Parameters<typeof verifyReceipt>[2] | undefined,
) {
  const of = `the receipt of event ${event.id}`
  const bytes = typeof text === 'string' ? strictBase64(text) : undefined
  if (!bytes) receiptFailure(`event ${event.id} has no receipt in base64`, event.id)
  const leafHash = hashLeaf(Buffer.from(event.hash, 'hex'))
  let verified
  try {
    verified = verifier ? verifyReceipt(bytes, leafHash, verifier) : receiptInclusion(bytes, leafHash)
  } catch (error) {
    if (!(error instanceof CoseError)) throw error
    receiptFailure(`${of} does not verify: ${error.message}`, event.id)
  }
  if (verified.treeSize !== pkg.merkle.tree_size || verified.leafIndex !== event.index)
    receiptFailure(
      `${of} is for leaf ${verified.leafIndex} of ${verified.treeSize}, not leaf ${event.index} of the package ` +
        `tree of ${pkg.merkle.tree_size}`,
      event.id,
    )
  if (Buffer.from(verified.root).toString('hex') !== pkg.merkle.root)
    receiptFailure(`${of} leads to another root than the package's`, event.id)
  return verified
}
