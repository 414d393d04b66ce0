/**
 * The Merkle domain's one error class, with a closed set of codes (the HTTP error codes of docs/api.md).
 * The service layer maps them onto the HTTP codes of docs/api.md.
 */

import {CodedError} from '../coded-error.js'

export type MerkleErrorCode = 'root_mismatch' | 'invalid_proof' | 'invalid_argument'

export class MerkleError extends CodedError<MerkleErrorCode> {
  /** On `root_mismatch`: the root the caller trusts, as lower-case hex. */
  readonly expected?: string
  /** On `root_mismatch`: the root recomputed from the proof, as lower-case hex. */
  readonly actual?: string

  constructor(code: MerkleErrorCode, message: string, options: {expected?: string; actual?: string} = {}) {
    super(code, message)
    this.name = 'MerkleError'
    if (options.expected !== undefined) this.expected = options.expected
    if (options.actual !== undefined) this.actual = options.actual
  }
}

/** Throws `invalid_argument` unless `value` is an integer with `min <= value <= max`. */
export function requireIntegerInRange(name: string, value: number, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const message =
      max < min
        ? `${name} ${value} is out of range: no ${name} is valid here`
        : `${name} must be an integer in ${min}..${max}, got ${value}`
    throw new MerkleError('invalid_argument', message)
  }
}

/** Throws `invalid_argument` unless `value` is exactly 32 bytes (one SHA-256 output). */
export function requireHashLength(name: string, value: Uint8Array): void {
  if (!(value instanceof Uint8Array) || value.length !== 32) {
    throw new MerkleError('invalid_argument', `${name} must be 32 bytes`)
  }
}
