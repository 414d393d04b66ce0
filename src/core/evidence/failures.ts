/**
 * How an evidence package fails verification (docs/verification.md): one error class whose code
 * is the check that failed, a closed set, so that every part of the verifier reports alike and
 * the command and GET endpoints map a failure once.
 */
import {CodedError} from '../coded-error.js'
import type {ChainFailureReason} from '../chain/index.js'

/** The checks of docs/verification.md, each the name of a failure. */
export type EvidenceErrorCode =
  | 'format'
  | 'filters'
  | 'completeness'
  | 'event_hash'
  | 'chain_link'
  | 'chain_summary'
  | 'inclusion_proof'
  | 'timestamp'
  | 'consistency'
  | 'checkpoint'
  | 'receipt'
  | 'keys'
  | 'signature'
  | 'erasures'

/** The first failure of a package, as `verify --package --json` prints it. */
export interface PackageFailure {
  check: EvidenceErrorCode
  /** For content and link faults: the reason GET /v1/verify gives for the same fault in a store. */
  reason?: ChainFailureReason
  message: string
  event_id?: string
  agent_id?: string
  sequence?: number
  expected?: string
  actual?: string
}

/** A package (or one of its members) that does not verify; `failure` says where and why. */
export class EvidenceError extends CodedError<EvidenceErrorCode> {
  override name = 'EvidenceError'

  constructor(readonly failure: PackageFailure) {
    super(failure.check, failure.message)
  }
}

/** Stops the verification at a failure. */
export function fail(failure: PackageFailure): never {
  throw new EvidenceError(failure)
}
