/**
 * RFC 3161 timestamping: the embedded TSA's certificates and tokens, the client side of the
 * protocol, and token verification. Plain values only cross this boundary (bytes, PEM, objects).
 */
export {TimestampError, type TimestampErrorCode} from './errors.js'
export {createTsaMaterial, type TsaMaterial} from './material.js'
export {derToPem, pemToDer, splitCertificates} from './pem.js'
export {buildTimestampRequest, parseTimestampResponse} from './request.js'
export {EMBEDDED_POLICY_OID, issueTimestampToken, type IssuedToken, type IssueOptions} from './token.js'
export {describeTimestampToken, type TokenInfo} from './tstinfo.js'
export {unsignedFieldMismatch, verifyTimestampToken, type TokenVerification} from './verify.js'
