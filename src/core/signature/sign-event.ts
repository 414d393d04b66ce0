/**
 * The client side of signed events (docs/signatures.md): `signEvent` turns an event a client is
 * about to send into one its agent signed. The service validates and normalises the event the same
 * way (validateEvent), so the signing input it rebuilds is the one signed here.
 */
import {v7 as uuidv7} from 'uuid'
import {validationError} from '../errors.js'
import {validateEvent} from '../event/validate.js'
import {signDetached} from '../jws/detached.js'
import {parsePrivateJwk} from '../jws/jwk.js'
import {signingInputOf} from './signing-input.js'

export interface SignEventOptions {
  /** The time written as `timestamp` when the event has none (default: now). */
  now?: Date
}

/**
 * Signs an event (the body of POST /v1/events) with the agent's private JWK (Ed25519 or P-256):
 * gives it an `id` and a `timestamp` when it has none (the signature covers both, so the service
 * must not choose them), draws a salt for each payload member it sends without one, and adds the
 * detached JWS over the signing input as `signature`. Returns a new body; throws a validation
 * error (AuditError) for an event the service would refuse, and a JwsError (bad_jwk) for an unusable key.
 */
export function signEvent(
  event: Record<string, unknown>,
  privateJwk: unknown,
  options: SignEventOptions = {},
): Record<string, unknown> {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw validationError([{field: 'body', message: 'must be a JSON object'}])
  }
  const key = parsePrivateJwk(privateJwk)
  const now = options.now ?? new Date()
  const {signature: _previous, ...body} = event
  body.id ??= uuidv7()
  body.timestamp ??= now.toISOString()
  const validated = validateEvent(body, {now, generateId: uuidv7})
  const signed: Record<string, unknown> = {...body, id: validated.event.id, timestamp: validated.event.timestamp}
  if (validated.event.salts !== undefined) signed.salts = validated.event.salts
  signed.signature = signDetached(signingInputOf(validated.event), key)
  return signed
}
