/**
 * Signed statements (RFC 9943; draft-ietf-scitt-scrapi, "Register Signed Statement"): a
 * COSE_Sign1 by an agent's registered key (docs/api.md, Agent keys), checked before anything is recorded.
 * The protected header must carry `alg` (EdDSA -8, or ES256 -7 for a P-256 key), `kid` (the key's
 * RFC 7638 thumbprint, as text or as its UTF-8 bytes) and the CWT claims (header 15, RFC 9597)
 * whose `iss` is the agent the key is registered for; the payload is attached.
 */
import {jwkVerifier, type SigningJwk} from '../crypto.js'
import {CoseError} from './errors.js'
import {CWT_ISS, CWT_SUB} from './receipt.js'
import {ALG, decodeSign1, HEADER, verifySign1} from './sign1.js'

/** The largest statement accepted, as the body of one event (docs/api.md, POST /v1/events). */
export const MAX_STATEMENT_BYTES = 1024 * 1024

/** What the key registry knows of a `kid` (docs/api.md, Agent keys). */
export interface AgentKey {
  agentId: string
  jwk: SigningJwk
  /** The log index of its KEY_REGISTERED event. */
  registeredIndex: number
  /** The log index of its KEY_REVOKED event, once revoked. */
  revokedIndex?: number
}

export type AgentKeyLookup = (kid: string) => AgentKey | undefined | Promise<AgentKey | undefined>

export interface CheckedStatement {
  agentId: string
  kid: string
  alg: 'EdDSA' | 'ES256'
  issuer: string
  subject?: string
  /** Header 3, a media type or a CoAP content format. */
  contentType?: string | number
  payload: Uint8Array
  /** The statement as received. */
  bytes: Uint8Array
}

const utf8 = new TextDecoder('utf-8', {fatal: true})

function kidText(kid: unknown): string {
  if (typeof kid === 'string') return kid
  if (kid instanceof Uint8Array) {
    try {
      return utf8.decode(kid)
    } catch {
      throw new CoseError('unknown_key', 'the kid is not the UTF-8 text of a registered key id')
    }
  }
  throw new CoseError('malformed', 'the protected header has no kid (4): name the agent key that signed')
}

function algorithmOf(alg: unknown): 'EdDSA' | 'ES256' {
  if (alg === ALG.EdDSA) return 'EdDSA'
  if (alg === ALG.ES256) return 'ES256'
  const named = alg === undefined ? 'no alg (1)' : `alg ${String(alg)}`
  throw new CoseError('unsupported', `the protected header has ${named}; accepted: EdDSA (-8), ES256 (-7)`)
}

/** The action_type of the event a signed statement is recorded as (docs/api.md, "POST /entries"). */
export const STATEMENT_ACTION_TYPE = 'SIGNED_STATEMENT'
/** The label naming the statement's kid, which no erasure or redaction withholds (docs/verification.md 8). */
export const STATEMENT_KID_LABEL = 'kid'

/** A signed statement decoded, its headers checked, its key not yet looked up. */
interface ParsedStatement {
  sign1: ReturnType<typeof decodeSign1> & {payload: Uint8Array}
  alg: 'EdDSA' | 'ES256'
  kid: string
  issuer: string
  subject?: string
  bytes: Uint8Array
}

/** Decodes a signed statement and checks its headers; throws CoseError naming the first thing wrong. */
export function parseSignedStatement(bytes: Uint8Array): ParsedStatement {
  if (bytes.length > MAX_STATEMENT_BYTES)
    throw new CoseError('too_large', `the statement is ${bytes.length} bytes; at most ${MAX_STATEMENT_BYTES}`)
  const sign1 = decodeSign1(bytes)
  const header = sign1.protectedHeader
  if (header.has(HEADER.crit) || sign1.unprotectedHeader.has(HEADER.crit))
    throw new CoseError('unsupported', 'critical header parameters (crit, 2) are not understood here')
  const alg = algorithmOf(header.get(HEADER.alg))
  const kid = kidText(header.get(HEADER.kid))
  const claims = header.get(HEADER.cwtClaims)
  const issuer = claims instanceof Map ? claims.get(CWT_ISS) : undefined
  if (typeof issuer !== 'string')
    throw new CoseError('malformed', 'the protected header has no CWT claims (15) with an iss (1) text string')
  const subject = claims instanceof Map ? claims.get(CWT_SUB) : undefined
  if (subject !== undefined && typeof subject !== 'string')
    throw new CoseError('malformed', 'the CWT claim sub (2) is not a text string')
  if (sign1.payload === null)
    throw new CoseError('payload_missing', 'the statement has a detached payload; send it attached')
  const parsed: ParsedStatement = {sign1: {...sign1, payload: sign1.payload}, alg, kid, issuer, bytes}
  if (subject !== undefined) parsed.subject = subject
  return parsed
}

/** Checks a parsed statement against the key its kid names: revocation, issuer, signature. */
function verifyStatementKey(statement: ParsedStatement, key: AgentKey): CheckedStatement {
  const {sign1, alg, kid, issuer, subject, bytes} = statement
  if (key.revokedIndex !== undefined)
    throw new CoseError(
      'revoked_key',
      `the key ${kid} of agent ${key.agentId} was revoked at index ${key.revokedIndex}`,
    )
  if (issuer !== key.agentId)
    throw new CoseError(
      'wrong_issuer',
      `iss ${JSON.stringify(issuer)} is not ${JSON.stringify(key.agentId)}, the agent of key ${kid}`,
    )
  let verify
  try {
    // RFC 9053 2.1 and 2.2: EdDSA (-8) goes with an OKP Ed25519 key, ES256 (-7) with an EC P-256 key.
    const fits = alg === 'EdDSA' ? key.jwk.kty === 'OKP' : key.jwk.kty === 'EC'
    if (!fits) throw new RangeError(`the key (kty ${key.jwk.kty}, crv ${key.jwk.crv}) is not one for ${alg}`)
    verify = jwkVerifier(key.jwk)
  } catch (error) {
    throw new CoseError('unsupported', `the key ${kid} cannot verify ${alg}: ${(error as Error).message}`)
  }
  if (!verifySign1(sign1, verify)) throw new CoseError('bad_signature', `the signature does not verify with key ${kid}`)
  const contentType = sign1.protectedHeader.get(HEADER.contentType)
  return {
    agentId: key.agentId,
    kid,
    alg,
    issuer,
    ...(subject === undefined ? {} : {subject}),
    ...(typeof contentType === 'string' || typeof contentType === 'number' ? {contentType} : {}),
    payload: sign1.payload,
    bytes,
  }
}

/** Decodes and checks a signed statement; throws CoseError naming the first thing wrong. */
export async function checkSignedStatement(bytes: Uint8Array, lookup: AgentKeyLookup): Promise<CheckedStatement> {
  const statement = parseSignedStatement(bytes)
  const key = await lookup(statement.kid)
  if (!key) throw new CoseError('unknown_key', `no agent key is registered under kid ${statement.kid}`)
  return verifyStatementKey(statement, key)
}
