/**
 * Queries of docs/api.md (Query): events, one event, search, agents, stats. The HTTP
 * routes and the CLI's --data-dir mode both call these, so they answer the same way.
 */
import {inScope, scopedFilter, type AgentScope} from '../core/auth/agent-scope.js'
import {AuditError, validationError, type FieldError} from '../core/errors.js'
import {parseEventQuery, parsePage, type QueryParams} from '../core/query-params.js'
import {lookupId} from '../core/request-text.js'
import {parseSearchQuery} from '../core/search/index.js'
import type {AgentSummary, StoreStats, StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {IntegrityService} from './integrity.js'
import {PageCache, type CachedPage} from './page-cache.js'

const DAY_MS = 24 * 60 * 60 * 1000

export interface SearchResponse {
  query: string
  total: number
  limit: number
  offset: number
  results: StoredEvent[]
}

export type AgentView = AgentSummary & {chain_valid: boolean}

/** GET /v1/stats: the store's counts, the chain health and the tree. */
export type StatsView = StoreStats & {chain_health: number; tree_size: number; merkle_root: string}

export class QueryService {
  private readonly store: EventStore
  private readonly integrity: IntegrityService
  /** Full pages of listEvents, which never change in an append-only log (page-cache.ts). */
  readonly #pages = new PageCache()

  constructor(options: {store: EventStore; integrity: IntegrityService}) {
    this.store = options.store
    this.integrity = options.integrity
  }

  /** With `scope` (a key bound to agents, docs/security.md), only their events, counted and paged alike. */
  async listEvents(params: QueryParams, scope?: AgentScope): Promise<{total: number; events: StoredEvent[]}> {
    const {total, page} = await this.#listPage(params, scope)
    return {total, events: page.events}
  }

  /** listEvents with the events as UTF-8 JSON (GET /v1/events sends it as it is). */
  async listEventsJson(params: QueryParams, scope?: AgentScope): Promise<{total: number; body: Buffer}> {
    const {total, page} = await this.#listPage(params, scope)
    page.body ??= Buffer.from(JSON.stringify(page.events))
    return {total, body: page.body}
  }

  async #listPage(params: QueryParams, scope: AgentScope | undefined): Promise<{total: number; page: CachedPage}> {
    const parsed = parseEventQuery(params)
    const {page} = parsed
    const filter = scopedFilter(parsed.filter, scope)
    const key = JSON.stringify([filter, page.limit, page.offset])
    const cached = this.#pages.get(key)
    if (cached !== undefined) return {total: await this.store.countEvents(filter), page: cached}
    const generation = this.#pages.generation
    const {total, items} = await this.store.queryEvents(filter, page)
    return {total, page: this.#pages.offer(key, page.limit, items, generation)}
  }

  /** Stored events changed (an erasure, here or in another process): no page read before is served again. */
  forgetPages(): void {
    this.#pages.clear()
  }

  /** The event, or 404: also for an event of an agent outside `scope`, as if it did not exist. */
  async getEvent(id: string, scope?: AgentScope): Promise<StoredEvent> {
    const stored = lookupId(id)
    const event = stored === undefined ? undefined : await this.store.getEvent(stored)
    if (!event || !inScope(scope, event.agent_id)) throw new AuditError('not_found', `no event with id ${id}`)
    return event
  }

  async search(params: QueryParams, scope?: AgentScope): Promise<SearchResponse> {
    const errors: FieldError[] = []
    const q = typeof params.q === 'string' ? params.q : ''
    if (Array.isArray(params.q)) errors.push({field: 'q', message: 'must be given at most once'})
    else if (q.trim() === '') errors.push({field: 'q', message: 'is required and must not be blank'})
    const page = parsePage(params, errors)
    if (errors.length > 0) throw validationError(errors)
    const within = scope === undefined ? undefined : {agents: scope.patterns}
    const {total, items} = await this.store.searchEvents(parseSearchQuery(q), page, within)
    return {query: q, total, limit: page.limit, offset: page.offset, results: items}
  }

  /**
   * Every agent with events, also one whose recorded head is missing (only after its row in the
   * store's agents table was removed): it is listed from its events, with chain_valid false as its
   * chain verification says, so that /v1/agents and /v1/stats' chain_health count the same agents.
   */
  async agents(scope?: AgentScope): Promise<AgentView[]> {
    const [stored, status] = await Promise.all([this.store.agentSummaries(), this.integrity.chainStatus()])
    const summaries = scope === undefined ? stored : stored.filter((s) => scope.matches(s.agent_id))
    const listed = new Set(summaries.map((s) => s.agent_id))
    const missing = [...status.keys()].filter((id) => !listed.has(id) && inScope(scope, id))
    const unrecorded = (await Promise.all(missing.map((id) => this.summaryFromEvents(id)))).filter(
      (s) => s !== undefined,
    )
    // Only then re-sorted: otherwise the store's order by agent_id stands as it is.
    const byId = (a: AgentSummary, b: AgentSummary) => (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0)
    const all = unrecorded.length === 0 ? summaries : [...summaries, ...unrecorded].sort(byId)
    return all.map((s) => ({
      agent_id: s.agent_id,
      event_count: s.event_count,
      first_activity: s.first_activity,
      last_activity: s.last_activity,
      last_sequence: s.last_sequence,
      head_hash: s.head_hash,
      chain_valid: status.get(s.agent_id) ?? true,
    }))
  }

  /**
   * StoreStats of the agents inside a scope, counted from their events: the store's aggregates are
   * kept for the whole log only, so this reads every event of those agents once.
   */
  async #scopedStats(scope: AgentScope, recentSince: string): Promise<StoreStats> {
    const stats: StoreStats = {
      total_events: 0,
      events_last_24h: 0,
      active_agents: 0,
      total_agents: 0,
      by_action_type: {},
      by_action_status: {},
    }
    const agents = new Set<string>()
    const active = new Set<string>()
    for await (const event of this.store.scanEvents({filter: {agents: scope.patterns}})) {
      stats.total_events++
      agents.add(event.agent_id)
      if (event.recorded_at >= recentSince) {
        stats.events_last_24h++
        active.add(event.agent_id)
      }
      stats.by_action_type[event.action_type] = (stats.by_action_type[event.action_type] ?? 0) + 1
      stats.by_action_status[event.action_status] = (stats.by_action_status[event.action_status] ?? 0) + 1
    }
    const storage = this.store.storage?.()
    // In the stores' order of the aggregates: by value.
    const sorted = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).sort(byKey))
    return {
      ...stats,
      total_agents: agents.size,
      active_agents: active.size,
      by_action_type: sorted(stats.by_action_type),
      by_action_status: sorted(stats.by_action_status),
      ...(storage ? {storage} : {}),
    }
  }

  /** An agent's summary computed from its events, as the store's agents table would hold it. */
  private async summaryFromEvents(agentId: string): Promise<AgentSummary | undefined> {
    let summary: AgentSummary | undefined
    for await (const event of this.store.scanEvents({filter: {agent_id: agentId}})) {
      summary ??= {
        agent_id: agentId,
        event_count: 0,
        first_activity: event.timestamp,
        last_activity: event.timestamp,
        last_sequence: event.sequence,
        head_hash: event.hash,
      }
      summary.event_count++
      if (event.timestamp < summary.first_activity) summary.first_activity = event.timestamp
      if (event.timestamp > summary.last_activity) summary.last_activity = event.timestamp
      if (event.sequence >= summary.last_sequence) {
        summary.last_sequence = event.sequence
        summary.head_hash = event.hash
      }
    }
    return summary
  }

  /** With `scope`, the counts of the agents inside it only (chain health too); the tree is the trail's. */
  async stats(now: Date = new Date(), scope?: AgentScope): Promise<StatsView> {
    const recentSince = new Date(now.getTime() - DAY_MS).toISOString()
    const [stats, status] = await Promise.all([
      scope === undefined ? this.store.stats(recentSince) : this.#scopedStats(scope, recentSince),
      this.integrity.chainStatus(),
    ])
    const agents = [...status].filter(([agentId]) => inScope(scope, agentId)).map(([, valid]) => valid)
    const healthy = agents.filter(Boolean).length
    const root = await this.integrity.merkleRoot()
    return {
      total_events: stats.total_events,
      events_last_24h: stats.events_last_24h,
      active_agents: stats.active_agents,
      total_agents: stats.total_agents,
      chain_health: agents.length === 0 ? 1.0 : healthy / agents.length,
      tree_size: root.tree_size,
      merkle_root: root.merkle_root,
      by_action_type: stats.by_action_type,
      by_action_status: stats.by_action_status,
      ...(stats.storage ? {storage: stats.storage} : {}),
    }
  }
}

function byKey([a]: [string, number], [b]: [string, number]): number {
  return a < b ? -1 : a > b ? 1 : 0
}
