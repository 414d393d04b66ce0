/**
 * The one error type of the timestamp core. Its codes say who is at fault: the TSA (did not
 * grant), the bytes it sent back (not a usable TimeStampResp), or a token that does not hold.
 * The service edge maps every code to the API's `tsa_unavailable`.
 */
import {CodedError} from '../coded-error.js'
export type TimestampErrorCode = 'tsa_unavailable' | 'invalid_response' | 'invalid_token'

export class TimestampError extends CodedError<TimestampErrorCode> {
  override name = 'TimestampError'
}
