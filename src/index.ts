/**
 * The package's library entry (`import {signEvent} from 'audit-trail'`): what a client needs to
 * sign its agent's events (docs/signatures.md) and to check them as the service does.
 */
export {signEvent, signingInputOf, type SignEventOptions} from './core/signature/index.js'
export {
  jwkThumbprint,
  parsePrivateJwk,
  parsePublicJwk,
  type PrivateSigningJwk,
  type SigningJwk,
} from './core/jws/jwk.js'
export {generateSigningJwk, publicJwkOf} from './core/crypto.js'
export {AuditError} from './core/errors.js'
