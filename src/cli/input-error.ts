/**
 * What is wrong with a file a command reads (events for `ingest`, an evidence package): one error
 * class with a closed set of codes (docs/design.md, Errors). Each is the user's input, exit 2, but
 * `invalid_package`, a package `verify --package` reports as a failed check (exit 1).
 */
import {CodedError} from '../core/coded-error.js'
export type InputErrorCode =
  /** The bytes are not UTF-8 (RFC 8259 section 8.1). */
  | 'not_utf8'
  /** The text is not JSON (or, for events, not NDJSON either). */
  | 'not_json'
  /** JSON, but not a package anyone can check (docs/verification.md section 1). */
  | 'invalid_package'
  /** The file cannot be read at all. */
  | 'unreadable'

export class InputError extends CodedError<InputErrorCode> {
  override name = 'InputError'
}
