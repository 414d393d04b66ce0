/**
 * The one error middleware (STYLE.md, after Koa's docs/error-handling.md): every failure becomes
 * the contract's error body `{"error": {"code", "message", "details"?}}` with its status. Only
 * AuditError messages reach a client; anything unexpected is logged once here and answered with a
 * generic 500 that reveals nothing of the internals.
 */
import type {Context, Next} from 'koa'
import {AuditError, type ErrorCode} from '../../core/errors.js'

/** Errors thrown by the HTTP stack itself (body parsing, raw-body) carry a status and a type. */
function fromHttpError(error: {status?: number; type?: string; message?: string}): AuditError | undefined {
  switch (error.status) {
    case 400:
      return new AuditError('invalid_json', 'the request body is not valid JSON')
    case 413:
      return new AuditError('payload_too_large', 'the request body is larger than this endpoint accepts')
    case 415:
      return new AuditError('unsupported_media_type', 'the request body must be application/json')
    default:
      return undefined
  }
}

export type ErrorLogger = (error: unknown, ctx: Context) => void

export const logToStderr: ErrorLogger = (error, ctx) => {
  if (error instanceof AuditError) {
    const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : ''
    console.error(`audit-trail: ${ctx.method} ${ctx.path}: ${error.code}: ${error.message}${cause}`)
  } else {
    console.error(`audit-trail: ${ctx.method} ${ctx.path} failed:`, error)
  }
}

export function errorMiddleware(log: ErrorLogger = logToStderr) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next()
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AuditError('not_found', `no route for ${ctx.method} ${ctx.path}`)
      }
    } catch (thrown) {
      let error = thrown instanceof AuditError ? thrown : fromHttpError(thrown as {status?: number})
      if (!error) {
        log(thrown, ctx)
        error = new AuditError('internal_error', 'the server failed to handle the request')
      } else if (error.status >= 500) {
        // The client gets the code; the operator gets the cause (a full disk, a TSA that is down).
        log(error, ctx)
      }
      ctx.status = error.status
      ctx.body = error.toBody()
      if (error.code === ('unauthorized' satisfies ErrorCode)) ctx.set('WWW-Authenticate', 'Bearer')
      // A body refused before it was read to its end (too large, say) leaves bytes of it on the
      // connection: the connection is closed after the answer, and says so, so that a client's
      // pool does not send its next request on a socket the server is about to drop.
      if (!ctx.req.complete) ctx.set('Connection', 'close')
    }
  }
}
