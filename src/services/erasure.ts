/**
 * POST /v1/erasures, `audit-trail erase` and payload retention (docs/erasure.md): works out what an
 * erasure covers, has the store record its event first and then erase, and answers with what was
 * erased and what was skipped. Erasing again what is erased records nothing.
 */
import {inScope, scopedFilter, type AgentScope} from '../core/auth/agent-scope.js'
import {v7 as uuidv7} from 'uuid'
import {
  ERASE_ACTION,
  erasureEventBody,
  parseErasureRequest,
  removableMembers,
  RETENTION_ACTION,
  type ErasureIntent,
  type ErasureMetadata,
  type ErasureRequest,
} from '../core/erasure/index.js'
import {PAYLOAD_MEMBERS, RESERVED_AGENT_PREFIX} from '../core/event/index.js'
import type {PayloadMemberName, StoredEvent} from '../core/types.js'
import type {ErasurePlan, EventStore} from '../store/store.js'
import type {IngestService} from './ingest.js'

/** Why a covered event lost nothing. */
type SkipReason = 'not_found' | 'hash_version_1' | 'already_erased' | 'no_payload' | 'service_event'

/** The answer of POST /v1/erasures (docs/api.md); `erasure` is null when nothing was left to erase. */
export interface ErasureResponse {
  erasure: StoredEvent | null
  erased_events: number
  erased_members: number
  skipped: {id: string; reason: SkipReason}[]
}

/** What one erasure covers, worked out from the store before its event is recorded. */
interface Coverage {
  metadata: Omit<ErasureMetadata, 'reason' | 'requested_by' | 'members'>
  intent: Omit<ErasureIntent, 'id' | 'members'>
  skipped: ErasureResponse['skipped']
}

export class ErasureService {
  constructor(
    private readonly options: {
      store: EventStore
      ingest: IngestService
      /** Told after every erasure that took anything (caches of stored events forget them). */
      onErased?: () => void
    },
  ) {}

  /** POST /v1/erasures: the body of docs/api.md; throws validation_error for a bad one (nothing recorded). */
  /**
   * With `scope` (a key bound to agents, docs/security.md): a listed event of another agent is
   * skipped as `not_found`, as if it did not exist, and a filter selects among the scope's agents only.
   */
  async erase(body: unknown, scope?: AgentScope): Promise<ErasureResponse> {
    const parsed = parseErasureRequest(body)
    const request = parsed.filter === undefined ? parsed : {...parsed, filter: scopedFilter(parsed.filter, scope)}
    return this.#erase(request, ERASE_ACTION, (size) =>
      request.ids === undefined ? this.#selection(request, size) : this.#listed(request, scope),
    )
  }

  /**
   * Payload retention (`serve --payload-retention`): every payload member of the events recorded
   * before `cutoff` (ISO time), as one erasure of action `payload.retention`; the service's own
   * events and events of hash version 1 are left as they are, and not reported.
   */
  eraseRecordedBefore(cutoff: string, reason: string, requestedBy: string): Promise<ErasureResponse> {
    const request: ErasureRequest = {filter: {}, members: [...PAYLOAD_MEMBERS], reason, requested_by: requestedBy}
    return this.#erase(request, RETENTION_ACTION, async (size) => {
      const coverage = await this.#selection(request, size, cutoff)
      return {...coverage, skipped: []}
    })
  }

  async #erase(
    request: ErasureRequest,
    action: string,
    cover: (size: number) => Promise<Coverage>,
  ): Promise<ErasureResponse> {
    const {store, ingest} = this.options
    let skipped: ErasureResponse['skipped'] = []
    const taken = await store.erase(async (): Promise<ErasurePlan | undefined> => {
      const coverage = await cover(await store.count())
      skipped = coverage.skipped
      if (coverage.intent.ids !== undefined && Object.keys(coverage.intent.ids).length === 0) return undefined
      if (coverage.metadata.count === 0) return undefined
      const id = uuidv7()
      const metadata: ErasureMetadata = {reason: request.reason, members: request.members, ...coverage.metadata}
      if (request.requested_by !== undefined) metadata.requested_by = request.requested_by
      const body = erasureEventBody(id, action, metadata)
      return {intent: {id, members: request.members, ...coverage.intent}, record: () => ingest.recordInternal(body)}
    })
    if (taken === undefined) return {erasure: null, erased_events: 0, erased_members: 0, skipped}
    this.options.onErased?.()
    return {erasure: taken.erasure, erased_events: taken.events, erased_members: taken.members, skipped}
  }

  /** The ids form: each listed event with the members it holds, or why it is skipped. */
  async #listed(request: ErasureRequest, scope: AgentScope | undefined): Promise<Coverage> {
    const ids = request.ids!
    const events = await this.options.store.getEvents(ids)
    const erasing: Record<string, PayloadMemberName[]> = {}
    const skipped: ErasureResponse['skipped'] = []
    for (const id of ids) {
      const found = events.get(id)
      const event = found !== undefined && inScope(scope, found.agent_id) ? found : undefined
      const reason = event === undefined ? 'not_found' : skipReason(event, request.members)
      if (reason !== undefined) skipped.push({id, reason})
      else erasing[id] = removableMembers(event!, request.members)
    }
    return {metadata: {ids: erasing}, intent: {ids: erasing}, skipped}
  }

  /** The filter form (and retention): the events among the first `size` the selection matches. */
  async #selection(request: ErasureRequest, size: number, recordedBefore?: string): Promise<Coverage> {
    const selection = {filter: request.filter!, before_index: size, recorded_before: recordedBefore}
    const retention = recordedBefore !== undefined
    const candidates = await this.options.store.erasureCandidates(selection, request.members, retention)
    const skipped: ErasureResponse['skipped'] = []
    let count = 0
    for (const candidate of candidates) {
      if (candidate.status === 'erase') count++
      else skipped.push({id: candidate.id, reason: candidate.status})
    }
    const bounds = recordedBefore === undefined ? {} : {recorded_before: recordedBefore}
    const intent = {filter: selection.filter, ...bounds, before_index: size}
    return {metadata: {...intent, count}, intent, skipped}
  }
}

/** Why a listed event loses nothing to an erasure of `members`, or undefined when it loses some. */
function skipReason(event: StoredEvent, members: readonly PayloadMemberName[]): SkipReason | undefined {
  if (event.agent_id.startsWith(RESERVED_AGENT_PREFIX)) return 'service_event'
  if (event.commitments === undefined) {
    return members.some((member) => event[member] !== undefined) ? 'hash_version_1' : 'no_payload'
  }
  if (removableMembers(event, members).length > 0) return undefined
  return members.some((member) => event.erased?.[member] !== undefined) ? 'already_erased' : 'no_payload'
}
