/** GET /v1/export: an evidence package streamed as it is written (docs/api.md, Export). */
import {once} from 'node:events'
import {PassThrough} from 'node:stream'
import Router from '@koa/router'
import {parseBooleanParam, parseExportQuery} from '../../core/query-params.js'
import {parseRedaction} from '../../core/erasure/index.js'
import type {AuditServices} from '../../services/audit.js'
import {ExportService} from '../../services/export.js'
import {scopedFilter} from '../../core/auth/agent-scope.js'
import {agentScopeOfRequest} from '../middleware/auth.js'

export function exportRoutes(services: AuditServices): Router {
  const router = new Router()

  router.get('/v1/export', async (ctx) => {
    // A key bound to agents exports their events only; the package names them in `filters` (docs/security.md).
    const filter = scopedFilter(parseExportQuery(ctx.query), agentScopeOfRequest(ctx))
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
