/** The JWS domain's one error class, with a closed set of codes (RFC 7515, RFC 7517). */
import {CodedError} from '../coded-error.js'

export type JwsErrorCode =
  /** A JWK that is not a signing key this service takes (RFC 7517, RFC 8037, RFC 7518 section 6.2). */
  | 'bad_jwk'
  /** A JWS that cannot be checked at all, before any key is tried (RFC 7515 section 7.1). */
  | 'malformed_jws'

export class JwsError extends CodedError<JwsErrorCode> {
  override name = 'JwsError'
}
