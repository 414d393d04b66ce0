/** Timestamping and export endpoints (CONTRACT.md section 4, Timestamping and Integrity). */
import {PassThrough} from 'node:stream'
import Router from '@koa/router'
import {parseExportQuery} from '../../core/query.js'
import type {AuditServices} from '../../services/audit.js'
import {ExportService} from '../../services/export.js'

export function timestampRoutes(services: AuditServices): Router {
  const router = new Router()

  router.post('/v1/timestamp', async (ctx) => {
    const record = await services.timestamps.issue()
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

  router.get('/v1/export', (ctx) => {
    const filter = parseExportQuery(ctx.query)
    const body = new PassThrough()
    ctx.type = 'application/json; charset=utf-8'
    ctx.set('Content-Disposition', `attachment; filename="${ExportService.fileName()}"`)
    ctx.body = body
    services.exporter.writePackage(filter, body).then(
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
