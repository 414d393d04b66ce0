/**
 * Errors are data: one error class with a closed set of codes, the same codes the HTTP API
 * returns (docs/api.md). The HTTP and CLI edges map them once.
 */
export type ErrorCode =
  | 'invalid_json'
  | 'validation_error'
  | 'invalid_signature'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'trail_not_found'
  | 'trail_sealed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'tsa_unavailable'
  | 'storage_full'
  | 'storage_unavailable'
  | 'internal_error'

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_json: 400,
  validation_error: 400,
  invalid_signature: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  trail_not_found: 404,
  trail_sealed: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  tsa_unavailable: 502,
  storage_full: 507,
  storage_unavailable: 503,
  internal_error: 500,
}

export interface FieldError {
  field: string
  message: string
}

interface ErrorBody {
  error: {code: ErrorCode; message: string; details?: FieldError[]}
}

export class AuditError extends Error {
  readonly code: ErrorCode
  readonly details?: FieldError[]

  constructor(code: ErrorCode, message: string, options: {details?: FieldError[]; cause?: unknown} = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'AuditError'
    this.code = code
    if (options.details && options.details.length > 0) this.details = options.details
  }

  get status(): number {
    return HTTP_STATUS[this.code]
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = {code: this.code, message: this.message}
    if (this.details) error.details = this.details
    return {error}
  }
}

/** A validation error with field-level details; the message names the first failing field. */
export function validationError(details: FieldError[]): AuditError {
  const first = details[0]
  const message = first ? `${first.field} ${first.message}` : 'invalid request'
  return new AuditError('validation_error', message, {details})
}
