/**
 * What the OTLP/HTTP receivers share (POST /v1/traces: otlp-traces.ts, POST /v1/logs:
 * otlp-logs.ts), mounted only with `serve --otlp` (docs/otlp.md); without it they answer 404
 * saying so. The body is read raw (protobuf or JSON, maybe gzip) with a size bound.
 */
import Router from '@koa/router'
import getRawBody from 'raw-body'
import {AuditError} from '../../core/errors.js'
import type {Context} from 'koa'
import {OTLP_MAX_BODY_BYTES} from '../../services/otlp/body.js'
import type {TraceExportRequest} from '../../services/otlp/export.js'

/**
 * The body as sent (gzip or not) has the same bound as the inflated body, the OTLP
 * specification's 20 MiB: an exporter that does not compress may send what one that does may.
 */
const MAX_WIRE_BYTES = OTLP_MAX_BODY_BYTES

export async function readRequest(ctx: Context): Promise<TraceExportRequest> {
  let body: Buffer
  try {
    body = await getRawBody(ctx.req, {limit: MAX_WIRE_BYTES})
  } catch (error) {
    if ((error as {status?: number}).status === 413)
      throw new AuditError('payload_too_large', `the OTLP request body is larger than ${MAX_WIRE_BYTES} bytes`)
    throw new AuditError('validation_error', 'the OTLP request body could not be read')
  }
  return {
    body,
    contentType: ctx.get('content-type') || undefined,
    contentEncoding: ctx.get('content-encoding') || undefined,
  }
}

export function respond(ctx: Context, result: {body: Uint8Array | string; contentType: string}): void {
  ctx.status = 200
  ctx.type = result.contentType
  ctx.body = typeof result.body === 'string' ? result.body : Buffer.from(result.body)
}

/** Without `serve --otlp` the receivers are not there (404), and the answer says what enables them. */
export function otlpDisabledRoutes(): Router {
  const router = new Router()
  for (const path of ['/v1/traces', '/v1/logs']) {
    router.post(path, () => {
      throw new AuditError('not_found', `POST ${path} is served only when the server runs with --otlp (serve --otlp)`)
    })
  }
  return router
}
