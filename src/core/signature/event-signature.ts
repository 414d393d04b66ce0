/**
 * Whether an event carries a valid signature by its agent (docs/signatures.md), in two steps:
 * - what the signature says on its own: it parses, names a kid, and verifies over the event's
 *   signing input with the JWK of that kid. A kid is a key's thumbprint, so this does not depend on
 *   when it is checked: it can run before sequencing, or on a hashing thread;
 * - whether that key was the agent's, registered and not revoked, at the event's index in the log
 *   (KeyTimeline): cheap, decided where the index is known (under the store's lock at ingest).
 */
import {CoseError} from '../cose/errors.js'
import {verifySign1} from '../cose/sign1.js'
import {parseSignedStatement, STATEMENT_ACTION_TYPE, STATEMENT_KID_LABEL} from '../cose/statement.js'
import {jwkVerifier} from '../crypto.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import {detachedJwsFault, DOES_NOT_VERIFY, parseDetachedJws, type DetachedJws} from '../jws/detached.js'
import {JwsError} from '../jws/errors.js'
import type {SigningJwk} from '../jws/jwk.js'
import type {EventInput, SignatureContent} from '../types.js'
import type {KeyTimeline} from './key-timeline.js'
import {signingInputOf} from './signing-input.js'

export type {SignatureContent}

export type SignatureProblem = 'missing_signature' | 'no_key' | 'unknown_key' | 'revoked_key' | 'bad_signature'

/** Why an event is refused at ingest (400 invalid_signature) or fails verification (bad_signature). */
export interface SignatureFault {
  problem: SignatureProblem
  /** Starts with the problem in words (`revoked key: ...`). */
  message: string
}

/** The verification a signature still needs: its key, its parsed JWS and the payload it must cover. */
export interface SignatureJob {
  kid: string
  jwk: SigningJwk
  jws: DetachedJws
  /** The event's signing input (JCS text). */
  payload: string
}

/** Whether what prepare answered is a job to run, rather than a verdict. */
export function isSignatureJob(value: SignatureContent | SignatureJob | null): value is SignatureJob {
  return value !== null && 'payload' in value
}

/**
 * Checks signatures' content, importing each key once (a verification reads many events per key).
 * `check` does it in one go; `prepare` and `run` split it, so that the verification itself (about
 * 50 µs an Ed25519 signature) can run on another thread.
 */
export class SignatureChecker {
  readonly #verifiers = new Map<string, (data: Uint8Array, signature: Uint8Array) => boolean>()

  constructor(private readonly jwkOf: (kid: string) => SigningJwk | undefined) {}

  /** The content verdict of an event's signature, or null when it has none. */
  check(event: EventInput): SignatureContent | null {
    const prepared = this.prepare(event)
    return isSignatureJob(prepared) ? this.run(prepared) : prepared
  }

  /** The verdict when it needs no verification (none, unreadable, unknown kid), or the job that verifies it. */
  prepare(event: EventInput): SignatureContent | SignatureJob | null {
    if (event.signature === undefined) return statementContent(event, this.jwkOf)
    let jws
    try {
      jws = parseDetachedJws(event.signature)
    } catch (error) {
      if (error instanceof JwsError && error.code === 'malformed_jws') return {fault: `the signature ${error.message}`}
      throw error
    }
    const kid = jws.header.kid as string
    const jwk = this.jwkOf(kid)
    if (jwk === undefined) return {kid, unchecked: true}
    // A payload member the commitments do not stand for would not be covered by the signature.
    const uncommitted = PAYLOAD_MEMBERS.find((m) => event[m] !== undefined && event.commitments?.[m] === undefined)
    if (uncommitted !== undefined) return {kid, fault: `${uncommitted} is not committed, so no signature covers it`}
    return {kid, jwk, jws, payload: signingInputOf(event)}
  }

  /** Verifies a job's signature (on any thread): its content verdict. */
  run(job: SignatureJob): SignatureContent {
    let verify = this.#verifiers.get(job.kid)
    if (verify === undefined) {
      try {
        verify = jwkVerifier(job.jwk)
      } catch (error) {
        return {kid: job.kid, fault: `the key cannot be used: ${(error as Error).message}`}
      }
      this.#verifiers.set(job.kid, verify)
    }
    const fault = detachedJwsFault(job.jws, job.payload, job.jwk, verify)
    return fault === undefined ? {kid: job.kid} : {kid: job.kid, fault}
  }
}

/** The statement's kid as the event records it outside its statement: the label, else `metadata.kid` (older events). */
function recordedKid(event: EventInput): string | undefined {
  const label = event.labels?.[STATEMENT_KID_LABEL]
  if (typeof label === 'string') return label
  const kid = (event.metadata as {kid?: unknown} | undefined)?.kid
  return typeof kid === 'string' ? kid : undefined
}

/**
 * A registered signed statement (docs/verification.md 8) is signed by its agent as a COSE_Sign1,
 * kept as the event's `input.statement`: that signature stands for the event's JWS. Its kid, issuer
 * and signature are checked here; whether the key was the agent's at that index, by signatureFault
 * as for any signature. A withheld statement (erased, or redacted from a package) can no longer be
 * checked: the kid its event records is taken as its signer, since the event's hash covers it.
 */
function statementContent(
  event: EventInput & {erased?: Record<string, string>; redacted?: readonly string[]},
  jwkOf: (kid: string) => SigningJwk | undefined,
): SignatureContent | null {
  if (event.action_type !== STATEMENT_ACTION_TYPE) return null
  const recorded = recordedKid(event)
  const encoded = (event.input as {statement?: unknown} | undefined)?.statement
  if (event.input === undefined && (event.erased?.input !== undefined || event.redacted?.includes('input'))) {
    return recorded === undefined ? {fault: 'the statement is withheld and its event names no kid'} : {kid: recorded}
  }
  if (typeof encoded !== 'string') return null
  let kid: string | undefined
  try {
    const statement = parseSignedStatement(Buffer.from(encoded, 'base64'))
    kid = statement.kid
    const jwk = jwkOf(kid)
    if (jwk === undefined) return {kid, unchecked: true}
    const label = event.labels?.[STATEMENT_KID_LABEL]
    if (label !== undefined && label !== kid) return {kid, fault: `the statement's kid is not the label kid ${label}`}
    if (statement.issuer !== event.agent_id) return {kid, fault: `the statement's iss is not ${event.agent_id}`}
    const fits = statement.alg === 'EdDSA' ? jwk.kty === 'OKP' : jwk.kty === 'EC'
    if (!fits) return {kid, fault: `the key ${kid} is not one for ${statement.alg}`}
    return verifySign1(statement.sign1, jwkVerifier(jwk)) ? {kid} : {kid, fault: DOES_NOT_VERIFY}
  } catch (error) {
    if (!(error instanceof CoseError)) throw error
    return {...(kid === undefined ? {} : {kid}), fault: `the signed statement ${error.message}`}
  }
}

const keyUrl = (agentId: string) => `PUT /v1/agents/${encodeURIComponent(agentId)}/keys/<kid>`

/**
 * Why the event of `agentId` at `index` (with the signature verdict `content`) has no valid
 * signature by a key of its agent at that point of the log, or undefined when it has one or needs
 * none. An agent needs signatures from its first key's registration on, also once every key of it
 * is revoked (it then records nothing until a new key is registered).
 */
export function signatureFault(
  agentId: string,
  index: number,
  content: SignatureContent | null,
  keys: KeyTimeline,
): SignatureFault | undefined {
  const keyed = keys.keyedBefore(agentId, index)
  if (content === null) {
    if (!keyed) return undefined
    const message = `missing signature: agent ${agentId} has a key registered, so each of its events must be signed`
    return {problem: 'missing_signature', message}
  }
  if (!keyed) {
    const message = `no key: agent ${agentId} has no key registered at this point of the log`
    return {problem: 'no_key', message: `${message} (register one: ${keyUrl(agentId)})`}
  }
  if (content.kid === undefined) return {problem: 'bad_signature', message: `bad signature: ${content.fault}`}
  const key = keys.owner(content.kid)
  if (key === undefined || key.agentId !== agentId) {
    const whose = key === undefined ? '' : ` (it is a key of agent ${key.agentId})`
    return {problem: 'unknown_key', message: `unknown key: ${content.kid} is not a key of agent ${agentId}${whose}`}
  }
  if (key.registeredIndex > index) {
    const when = `at index ${key.registeredIndex}, after this event (index ${index})`
    return {problem: 'unknown_key', message: `unknown key: ${content.kid} was registered for agent ${agentId} ${when}`}
  }
  if (key.revokedIndex !== undefined && key.revokedIndex < index) {
    const when = `at index ${key.revokedIndex}, before this event`
    return {problem: 'revoked_key', message: `revoked key: ${content.kid} of agent ${agentId} was revoked ${when}`}
  }
  if (content.unchecked) {
    return {problem: 'bad_signature', message: `bad signature: the log holds no usable JWK for key ${content.kid}`}
  }
  if (content.fault !== undefined) {
    if (content.fault !== DOES_NOT_VERIFY) return {problem: 'bad_signature', message: `bad signature: ${content.fault}`}
    const why = `it does not verify with key ${content.kid} over this event's signing input`
    return {problem: 'bad_signature', message: `bad signature: ${why} (corrupted, or made over other content)`}
  }
  return undefined
}
