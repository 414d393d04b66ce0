/**
 * JSON request bodies: application/json only (415 otherwise), a size limit per route (413), and
 * malformed JSON answered 400 invalid_json (CONTRACT.md section 4). Parsing is koa-body's.
 */
import type {Context, Next} from 'koa'
import {koaBody} from 'koa-body'
import {AuditError} from '../../core/errors.js'

export const MiB = 1024 * 1024

function hasBody(ctx: Context): boolean {
  return (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== ''
}

/** `optional`: a request without a body goes through with `ctx.request.body` undefined. */
export function jsonBody(limitBytes: number, options: {optional?: boolean} = {}) {
  const parse = koaBody({
    json: true,
    jsonStrict: false,
    jsonLimit: limitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    patchNode: false,
  })
  return async function readJson(ctx: Context, next: Next): Promise<void> {
    if (!hasBody(ctx) && options.optional) return next()
    if (!hasBody(ctx)) throw new AuditError('validation_error', 'a JSON request body is required', {details: [{field: 'body', message: 'is required'}]})
    if (!ctx.is('application/json', '+json')) {
      throw new AuditError('unsupported_media_type', 'the request body must be application/json')
    }
    if ((ctx.request.length ?? 0) > limitBytes) {
      throw new AuditError('payload_too_large', `the request body is larger than ${limitBytes} bytes`)
    }
    await parse(ctx, next)
  }
}
