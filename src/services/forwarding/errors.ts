/**
 * The forwarding area's one error class, with a closed set of codes (docs/forwarding.md): a
 * destination that cannot be used at start-up, and a batch a destination did not take.
 */
import {CodedError} from '../../core/coded-error.js'
export type ForwardingErrorCode =
  /** A --forward URL, filter, header or TLS file that cannot be used: `serve` stops naming the flag (exit 2). */
  | 'bad_destination'
  /** A batch not delivered that a later try may deliver (a network error, a 5xx, a 429). */
  | 'not_delivered'
  /** A batch the destination refused and will refuse again (an HTTP 4xx): sending stops. */
  | 'refused'

export class ForwardingError extends CodedError<ForwardingErrorCode> {
  override name = 'ForwardingError'
}
