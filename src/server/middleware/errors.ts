/**
 * The one error middleware (docs/design.md, after Koa's docs/error-handling.md): every failure becomes
 * the error body of docs/api.md (Errors), `{"error": {"code", "message", "details"?}}`, with its status. Only
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

/** The most of a refused body read and thrown away after the answer, as nginx's lingering close. */
const LINGER_BYTES = 64 * 1024 * 1024

/**
 * A body refused before it was read to its end (too large, a wrong type, no key) is read on and
 * thrown away before the answer is sent, so that the client finishes sending and then reads the
 * answer: closing a socket with unread bytes makes TCP send a reset, and a client still writing
 * gets EPIPE or ECONNRESET instead of the error. Node closes the socket right after the answer when
 * the client asked for `Connection: close` (or spoke HTTP/1.0), so the body must have passed by
 * then. More than LINGER_BYTES (or the server's request timeout) and the answer goes out with
 * `Connection: close`; a body declared that large is not waited for at all.
 */
export async function discardRest(ctx: Context): Promise<void> {
  const request = ctx.req
  if ((ctx.request.length ?? 0) > LINGER_BYTES) {
    ctx.set('Connection', 'close')
    return
  }
  // A decompressor or body reader may still be attached; the bytes go nowhere now.
  request.unpipe()
  await new Promise<void>((resolve) => {
    let discarded = 0
    const done = () => {
      request.off('data', count)
      request.off('end', done)
      request.off('close', done)
      request.off('error', done)
      resolve()
    }
    const count = (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded <= LINGER_BYTES) return
      ctx.set('Connection', 'close')
      // Past the limit the rest is still read off the socket, but the answer no longer waits.
      request.off('data', count)
      request.on('data', () => undefined)
      done()
    }
    request.on('data', count)
    request.once('end', done)
    request.once('close', done)
    request.once('error', done)
    request.resume()
  })
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
      if (!ctx.req.complete) await discardRest(ctx)
    }
  }
}
