/**
 * How an evidence package fails verification (docs/verification.md): one error class whose code
 * is the check that failed, a closed set, so that every part of the verifier reports alike and
 * the command and GET endpoints map a failure once.
 */
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
export class EvidenceError extends Error {
  override name = 'EvidenceError'
  readonly code: EvidenceErrorCode
  readonly failure: PackageFailure

  constructor(failure: PackageFailure) {
    super(failure.message)
    this.code = failure.check
    this.failure = failure
  }
}

/** Stops the verification at a failure. */
export function fail(failure: PackageFailure): never {
  throw new EvidenceError(failure)
}
