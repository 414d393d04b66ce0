/**
 * Human oversight (docs/oversight.md): held calls as approvals, read from the events of
 * `audit-trail:approvals` and decided once. The state is the log's own, so it survives a restart
 * and every process sharing a database answers the same; a decision is an event whose id is
 * derived from the request's, so the log's id check lets exactly one decision in.
 */
import {randomUUID} from 'node:crypto'
import {
  ApprovalBook,
  APPROVALS_AGENT,
  decisionEventBody,
  parseApprovalFilter,
  parseClose,
  parseDecision,
  parseHeldCall,
  requestEventBody,
  type ApprovalOutcome,
  type ApprovalView,
} from '../core/approval/index.js'
import {checkWritable, inScope, type AgentScope} from '../core/auth/agent-scope.js'
import {AuditError} from '../core/errors.js'
import type {QueryParams} from '../core/query-params.js'
import {lookupId} from '../core/request-text.js'
import type {StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'

/** Who closed an approval that no person decided (a timeout, a cancelled or abandoned call). */
export const PROXY_DECIDER = 'mcp-proxy'
/** Who decided when the key that decided has no `name=` (docs/security.md). */
export const UNNAMED_DECIDER = 'unnamed key'

interface ApprovalsOptions {
  store: EventStore
  /** Records one of the service's own events (IngestService.recordInternal). */
  record: (body: unknown) => Promise<StoredEvent>
}

export class ApprovalsService {
  readonly #store: EventStore
  readonly #record: (body: unknown) => Promise<StoredEvent>
  #book = new ApprovalBook()
  /** Catch-ups run one after the other, each reading what was stored before it began. */
  #reading: Promise<unknown> = Promise.resolve()

  constructor(options: ApprovalsOptions) {
    this.#store = options.store
    this.#record = options.record
  }

  /** The approvals with every approval event stored when called. */
  current(): Promise<ApprovalBook> {
    const read = this.#reading.then(() => this.#catchUp())
    this.#reading = read.catch(() => undefined)
    return read
  }

  async #catchUp(): Promise<ApprovalBook> {
    // A log shorter than what was read (a data directory replaced) is read again from the start.
    if ((await this.#store.count()) < this.#book.nextIndex) this.#book = new ApprovalBook()
    const book = this.#book
    for await (const event of this.#store.scanEvents({filter: {agent_id: APPROVALS_AGENT}, fromIndex: book.nextIndex}))
      book.apply(event)
    return book
  }

  /** GET /v1/approvals: in request order, filtered by state, the call's agent and the request's time. */
  async list(params: QueryParams, scope?: AgentScope): Promise<ApprovalView[]> {
    const filter = parseApprovalFilter(params)
    const matching = (await this.current())
      .all()
      .filter(
        (approval) =>
          inScope(scope, approval.agent_id) &&
          (filter.state === undefined || approval.state === filter.state) &&
          (filter.agent_id === undefined || approval.agent_id === filter.agent_id) &&
          (filter.since === undefined || approval.requested_at >= filter.since),
      )
    return matching.slice(-filter.limit)
  }

  /** GET /v1/approvals/<id>: 404 for an id that names no approval, or a call of an agent outside `scope`. */
  async get(id: string, scope?: AgentScope): Promise<ApprovalView> {
    const key = lookupId(id)
    const approval = key === undefined ? undefined : (await this.current()).get(key)
    if (approval === undefined || !inScope(scope, approval.agent_id))
      throw new AuditError('not_found', `no approval ${id}`)
    return approval
  }

  /** POST /v1/approvals: records the request of a held call (201). */
  async request(body: unknown, scope?: AgentScope): Promise<ApprovalView> {
    const call = parseHeldCall(body)
    checkWritable(scope, call.agent_id)
    const event = await this.#record(requestEventBody(call))
    return (await this.current()).get(event.id)!
  }

  /** POST /v1/approvals/<id>: a person's decision, named by the key's `name=`. */
  async decide(id: string, body: unknown, decidedBy: string | undefined, scope?: AgentScope): Promise<ApprovalView> {
    const decision = parseDecision(body)
    return this.#close(id, {...decision, decided_by: decidedBy ?? UNNAMED_DECIDER}, scope)
  }

  /** POST /v1/approvals/<id>/close: the proxy that held the call stops waiting. */
  async close(id: string, body: unknown, scope?: AgentScope): Promise<ApprovalView> {
    return this.#close(id, {...parseClose(body), decided_by: PROXY_DECIDER}, scope)
  }

  async #close(
    id: string,
    facts: {outcome: ApprovalOutcome; reason?: string; decided_by: string},
    scope: AgentScope | undefined,
  ): Promise<ApprovalView> {
    const approval = await this.get(id, scope)
    if (approval.decision !== null) throw decided(approval)
    const request = {
      id: approval.id,
      action_name: approval.action_name,
      ...(approval.trace_id !== null && {trace_id: approval.trace_id}),
      ...(approval.session_id !== null && {session_id: approval.session_id}),
    }
    try {
      await this.#record(decisionEventBody(request, facts, randomUUID()))
    } catch (error) {
      // Another decision took the one id a decision can have (core/approval/events.ts).
      if (!(error instanceof AuditError && error.code === 'conflict')) throw error
      throw decided((await this.current()).get(approval.id)!)
    }
    return (await this.current()).get(approval.id)!
  }
}

function decided(approval: ApprovalView): AuditError {
  const by = approval.decision ? ` by ${approval.decision.decided_by}` : ''
  return new AuditError('conflict', `approval ${approval.id} is already ${approval.state}${by}`)
}
