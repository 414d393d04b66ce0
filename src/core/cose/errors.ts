/** The COSE domain's one error class, with a closed set of codes (the HTTP error codes of docs/api.md). */
import {CodedError} from '../coded-error.js'

export type CoseErrorCode =
  /** Not CBOR, or not the COSE structure asked for (RFC 9052, RFC 9942). */
  | 'malformed'
  /** A well-formed structure this implementation does not accept (an algorithm, a `vds`, `crit`). */
  | 'unsupported'
  /** The signature does not verify with the key. */
  | 'bad_signature'
  /** No key, or not the expected key, is known for the `kid`. */
  | 'unknown_key'
  /** The key was revoked. */
  | 'revoked_key'
  /** The CWT claims do not name the key's owner as `iss`. */
  | 'wrong_issuer'
  /** A signed statement without an attached payload. */
  | 'payload_missing'
  /** More bytes than accepted. */
  | 'too_large'
  /** The inclusion proof does not lead from the entry to a root (RFC 9162 section 2.1.3.2). */
  | 'invalid_proof'

export class CoseError extends CodedError<CoseErrorCode> {
  override name = 'CoseError'
}
