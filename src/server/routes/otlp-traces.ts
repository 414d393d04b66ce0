/** POST /v1/traces, the OTLP/HTTP trace receiver (docs/otlp.md). */
import Router from '@koa/router'
import type {AgentDirectory} from '../../core/otlp/agents.js'
import type {AuditServices} from '../../services/audit.js'
import {scopedRecorder, exportTraces} from '../../services/otlp/export.js'
import {readRequest, respond} from './otlp.js'
import {agentScopeOfRequest} from '../middleware/auth.js'

/** `agents` is shared with the log and gRPC receivers, so a run's spans resolve alike whichever way they come. */
export function traceRoutes(services: AuditServices, agents: AgentDirectory): Router {
  const router = new Router()
  router.post('/v1/traces', async (ctx) => {
    respond(
      ctx,
      await exportTraces(await readRequest(ctx), scopedRecorder(services.ingest, agentScopeOfRequest(ctx)), agents),
    )
  })
  return router
}
