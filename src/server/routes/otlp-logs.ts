/** POST /v1/logs, the OTLP/HTTP log receiver (docs/otlp.md). */
import Router from '@koa/router'
import type {AgentDirectory} from '../../core/otlp/agents.js'
import type {AuditServices} from '../../services/audit.js'
import {scopedRecorder, exportLogs} from '../../services/otlp/export.js'
import {readRequest, respond} from './otlp.js'
import {agentScopeOfRequest} from '../middleware/auth.js'

/** `agents` is shared with the trace receivers, so a run's log records resolve as its spans do. */
export function logRoutes(services: AuditServices, agents: AgentDirectory): Router {
  const router = new Router()
  router.post('/v1/logs', async (ctx) => {
    respond(
      ctx,
      await exportLogs(await readRequest(ctx), scopedRecorder(services.ingest, agentScopeOfRequest(ctx)), agents),
    )
  })
  return router
}
