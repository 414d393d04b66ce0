/**
 * POST /v1/traces and POST /v1/logs, the OTLP/HTTP receivers, mounted only with `serve --otlp`
 * (docs/otlp.md); without it they answer 404 saying so. The body is read raw (protobuf or JSON, maybe gzip) with a size
 * bound.
 */
import Router from '@koa/router'
import getRawBody from 'raw-body'
import {AuditError} from '../../core/errors.js'
import type {Context} from 'koa'
import type {AgentDirectory} from '../../core/otlp/agents.js'
import type {AuditServices} from '../../services/audit.js'
import {OTLP_MAX_BODY_BYTES} from '../../services/otlp/body.js'
import {exportLogs, exportTraces, type TraceExportRequest} from '../../services/otlp/export.js'

/**
 * The body as sent (gzip or not) has the same bound as the inflated body, the OTLP
 * specification's 20 MiB: an exporter that does not compress may send what one that does may.
 */
const MAX_WIRE_BYTES = OTLP_MAX_BODY_BYTES

async function readRequest(ctx: Context): Promise<TraceExportRequest> {
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

function respond(ctx: Context, result: {body: Uint8Array | string; contentType: string}): void {
  ctx.status = 200
  ctx.type = result.contentType
  ctx.body = typeof result.body === 'string' ? result.body : Buffer.from(result.body)
}

/** `agents` is shared with the gRPC receiver, so a run's spans resolve alike whichever way they come. */
export function traceRoutes(services: AuditServices, agents: AgentDirectory): Router {
  const router = new Router()
  router.post('/v1/traces', async (ctx) => {
    respond(ctx, await exportTraces(await readRequest(ctx), services.ingest, agents))
  })
  router.post('/v1/logs', async (ctx) => {
    respond(ctx, await exportLogs(await readRequest(ctx), services.ingest, agents))
  })
  return router
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
