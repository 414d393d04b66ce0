/** Timestamping and export endpoints (docs/api.md, Timestamping and Integrity). */
import {once} from 'node:events'
import {PassThrough} from 'node:stream'
import Router from '@koa/router'
import {parseBooleanParam, parseExportQuery} from '../../core/query-params.js'
import {parseRedaction} from '../../core/erasure/index.js'
import type {AuditServices} from '../../services/audit.js'
import {ExportService} from '../../services/export.js'
import {jsonBody} from '../middleware/json-body.js'

export function timestampRoutes(services: AuditServices): Router {
  const router = new Router()

  router.post('/v1/timestamp', async (ctx) => {
    const record = await services.timestamps.issue()
    ctx.status = 201
    ctx.body = record
  })

  // `timestamps reset`: start signed history over after a restore, with the reason on record.
  router.post('/v1/timestamps/reset', jsonBody(64 * 1024), async (ctx) => {
    const body = ctx.request.body as {reason?: unknown} | null
    const record = await services.timestamps.reset(typeof body === 'object' && body !== null ? body.reason : undefined)
    ctx.status = 201
    ctx.body = record
  })

  router.get('/v1/timestamps', async (ctx) => {
    ctx.body = await services.timestamps.list()
  })

  router.get('/v1/timestamps/verify', async (ctx) => {
    ctx.body = await services.timestamps.verifyLatest()
  })

  router.get('/v1/timestamps/ca', async (ctx) => {
    ctx.type = 'application/x-pem-file'
    ctx.body = (await services.timestamps.trustAnchorsPem()).join('')
  })

  return router
}

export function exportRoutes(services: AuditServices): Router {
  const router = new Router()

  router.get('/v1/export', async (ctx) => {
    const filter = parseExportQuery(ctx.query)
    const receipts = parseBooleanParam(ctx.query, 'receipts')
    const redact = parseRedaction(ctx.query)
    const body = new PassThrough()
    const writing = services.exporter.writePackage(filter, body, new Date(), {receipts, redact})
    // The status line goes out with the package's first bytes (its first write is about 1 MiB, or
    // the whole package): a failure before them is answered with the error body, not a cut stream.
    const started = once(body, 'readable').catch(() => undefined)
    try {
      await Promise.race([started, writing])
    } catch (error) {
      body.destroy()
      throw error
    }
    ctx.type = 'application/json; charset=utf-8'
    ctx.set('Content-Disposition', `attachment; filename="${ExportService.fileName()}"`)
    ctx.body = body
    writing.then(
      () => body.end(),
      (error: unknown) => {
        // The status line is already sent: end the stream broken so the client sees a truncated, invalid document.
        console.error('audit-trail: export failed:', error)
        body.destroy(error as Error)
      },
    )
  })

  return router
}
