/**
 * The SCRAPI registration resources (draft-ietf-scitt-scrapi; docs/api.md, "POST /entries"): POST /entries
 * takes a signed statement (a COSE_Sign1 by a registered agent key), records it as a
 * SIGNED_STATEMENT event of that agent and answers 201 with the transparent statement, the
 * statement with its receipt in unprotected header 394 (RFC 9942 section 2); GET /entries/<event
 * id> answers the receipt. Every error under /entries is a concise problem details body (RFC 9290).
 */
import Router from '@koa/router'
import type {Context, Next} from 'koa'
import {
  checkSignedStatement,
  CoseError,
  decodeSign1,
  encodeProblem,
  encodeSign1,
  HEADER,
  MAX_STATEMENT_BYTES,
  PROBLEM_MEDIA_TYPE,
  STATEMENT_ACTION_TYPE,
  STATEMENT_KID_LABEL,
  type AgentKeyLookup,
  type CheckedStatement,
  type CoseErrorCode,
} from '../../core/cose/index.js'
import {AuditError, type ErrorCode} from '../../core/errors.js'
import type {AuditServices} from '../../services/audit.js'
import {agentScopeOfRequest} from '../middleware/auth.js'
import {discardRest} from '../middleware/errors.js'
import {COSE_MEDIA_TYPE} from './receipts.js'

/** The event a statement is recorded as (docs/api.md, "Signed statements"). */
const STATEMENT_ACTION_NAME = 'statement.register'

/** Titles stay the same from one occurrence to the next (RFC 9290 section 2); SCRAPI's where it has one. */
const COSE_PROBLEMS: Readonly<Record<CoseErrorCode, [number, string]>> = {
  malformed: [400, 'Malformed request'],
  unsupported: [400, 'Bad Signature Algorithm'],
  bad_signature: [400, 'Bad Signature'],
  unknown_key: [400, 'Unknown Key'],
  revoked_key: [400, 'Revoked Key'],
  wrong_issuer: [400, 'Wrong Issuer'],
  payload_missing: [400, 'Payload Missing'],
  too_large: [413, 'Payload Too Large'],
  invalid_proof: [400, 'Malformed request'],
}

const AUDIT_TITLES: Partial<Record<ErrorCode, string>> = {
  not_found: 'Not Found',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  validation_error: 'Rejected',
  payload_too_large: 'Payload Too Large',
  unsupported_media_type: 'Unsupported Media Type',
  conflict: 'Conflict',
  storage_full: 'Storage Full',
  storage_unavailable: 'Service Unavailable',
}

function isEntriesPath(path: string): boolean {
  return /^\/entries(\/|$)/i.test(path)
}

/**
 * Mounted above authentication: under /entries, the JSON errors of docs/api.md (a missing key
 * included) become problem details with the same status. Anything else goes on to the one error
 * middleware, which logs it.
 */
export function problemDetails() {
  return async function asProblem(ctx: Context, next: Next): Promise<void> {
    if (!isEntriesPath(ctx.path)) return next()
    try {
      await next()
      if (ctx.status === 404 && ctx.body === undefined)
        throw new AuditError('not_found', `no resource ${ctx.method} ${ctx.path}`)
    } catch (error) {
      let status: number
      let title: string
      if (error instanceof CoseError) [status, title] = COSE_PROBLEMS[error.code]
      else if (error instanceof AuditError && error.status < 500) {
        status = error.status
        title = AUDIT_TITLES[error.code] ?? error.code
        if (error.code === 'unauthorized') ctx.set('WWW-Authenticate', 'Bearer')
      } else throw error
      ctx.status = status
      ctx.type = PROBLEM_MEDIA_TYPE
      ctx.body = Buffer.from(encodeProblem({title, detail: (error as Error).message}))
      if (!ctx.req.complete) await discardRest(ctx)
    }
  }
}

/** The request body, at most MAX_STATEMENT_BYTES; a larger one is refused before it is all read. */
async function readStatement(ctx: Context): Promise<Buffer> {
  if (!ctx.is(COSE_MEDIA_TYPE))
    throw new AuditError('unsupported_media_type', `a signed statement is sent as ${COSE_MEDIA_TYPE}`)
  const tooLarge = () => new CoseError('too_large', `a signed statement is at most ${MAX_STATEMENT_BYTES} bytes`)
  if ((ctx.request.length ?? 0) > MAX_STATEMENT_BYTES) throw tooLarge()
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    length += chunk.length
    if (length > MAX_STATEMENT_BYTES) throw tooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/**
 * The event body a statement is recorded as: its bytes are the payload member `input`, committed
 * like any payload; the signer's kid is also a label, outside the members an erasure or a redacted
 * export withholds, so the event still shows whose key signed (docs/verification.md 8).
 */
function statementEvent(statement: CheckedStatement): Record<string, unknown> {
  return {
    agent_id: statement.agentId,
    action_type: STATEMENT_ACTION_TYPE,
    action_name: STATEMENT_ACTION_NAME,
    labels: {[STATEMENT_KID_LABEL]: statement.kid},
    input: {statement: Buffer.from(statement.bytes).toString('base64')},
    metadata: {
      kid: statement.kid,
      alg: statement.alg,
      iss: statement.issuer,
      ...(statement.subject === undefined ? {} : {sub: statement.subject}),
      ...(statement.contentType === undefined ? {} : {content_type: statement.contentType}),
    },
  }
}

/** The statement with `receipt` in its unprotected header 394 (RFC 9942 section 2); the signature stays valid. */
function transparentStatement(statement: Uint8Array, receipt: Uint8Array): Buffer {
  const sign1 = decodeSign1(statement)
  const unprotectedHeader = new Map(sign1.unprotectedHeader)
  unprotectedHeader.set(HEADER.receipts, [receipt])
  return Buffer.from(encodeSign1({...sign1, unprotectedHeader}))
}

export function entryRoutes(services: AuditServices, lookup: AgentKeyLookup): Router {
  const router = new Router()

  router.post('/entries', async (ctx) => {
    const bytes = await readStatement(ctx)
    const statement = await checkSignedStatement(bytes, lookup)
    const {event} = await services.ingest.recordOne(statementEvent(statement), agentScopeOfRequest(ctx))
    const {receipt} = await services.receipts.forEvent(event.id)
    ctx.status = 201
    ctx.set('Location', `/entries/${event.id}`)
    ctx.type = COSE_MEDIA_TYPE
    ctx.body = transparentStatement(bytes, receipt)
  })

  router.get('/entries/:id', async (ctx) => {
    // Another agent's entry is unknown to a key bound to agents (docs/security.md).
    const scope = agentScopeOfRequest(ctx)
    if (scope !== undefined) await services.query.getEvent(ctx.params.id!, scope)
    const {receipt} = await services.receipts.forEvent(ctx.params.id!)
    ctx.type = COSE_MEDIA_TYPE
    ctx.body = receipt
  })

  return router
}
