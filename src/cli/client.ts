/**
 * What a CLI command talks to: the services on a data directory (`--data-dir`), or a running
 * server (`--server URL`). Both answer with the shapes of the HTTP API, so a command prints the
 * same thing either way.
 */
import {SCOPE_HINT} from './next-step.js'
import {onTrail, plainHttpSentence} from './server-url.js'
import {Readable, type Writable} from 'node:stream'
import {pipeline} from 'node:stream/promises'
import {AuditError, HTTP_STATUS, type ErrorCode} from '../core/errors.js'
import {DEFAULT_TRAIL} from '../core/trail/name.js'
import {parseBooleanParam, parseExportQuery, type QueryParams} from '../core/query-params.js'
import {parseRedaction} from '../core/erasure/index.js'
import type {AllChainsResult, ChainResult} from '../core/chain/index.js'
import type {PolicyReport} from '../core/policy/index.js'
import type {StoredEvent, TimestampRecord} from '../core/types.js'
import type {AuditServices} from '../services/audit.js'
import {openTrails} from '../services/trail-registry.js'
import type {CreateTrailOptions, TrailInfo, Trails} from '../services/trails.js'
import {openLogIdentity} from '../services/checkpoints.js'
import type {BatchItemResult} from '../services/ingest.js'
import type {AgentKeyView, KeyChange} from '../services/agent-keys.js'
import type {ErasureResponse} from '../services/erasure.js'
import type {ApprovalView} from '../core/approval/index.js'
import {localDecider, watchApprovalEvents, type ApprovalEventListener} from './approvals.js'
import type {MerkleRootView} from '../services/integrity.js'
import type {AgentView, SearchResponse, StatsView} from '../services/event-queries.js'
import type {TimestampVerification} from '../services/timestamps.js'
import {forwardingStatus, type DestinationStatus} from '../services/forwarding/status.js'

type TimestampListItem = Omit<TimestampRecord, 'token'>

/** What `verify` answers: one agent's result, or the summary of every agent. */
export type ChainVerification = ChainResult | AllChainsResult

export interface AuditClient {
  ingestBatch(bodies: unknown[]): Promise<{status: number; results: BatchItemResult[]}>
  listEvents(params: QueryParams): Promise<{total: number; events: StoredEvent[]}>
  getEvent(id: string): Promise<StoredEvent>
  search(params: QueryParams): Promise<SearchResponse>
  agents(): Promise<AgentView[]>
  stats(): Promise<StatsView>
  /** GET /v1/verify: one agent's chain, or every agent's without `agentId`. */
  verify(agentId?: string): Promise<ChainVerification>
  merkleRoot(): Promise<MerkleRootView>
  exportPackage(params: QueryParams, out: Writable): Promise<void>
  /** POST /v1/policy/check: the request `{policies, scope}` over the stored events. */
  checkPolicy(request: unknown): Promise<PolicyReport>
  timestamp(): Promise<TimestampRecord>
  /** `timestamps reset`: start signed history over from the current tree, recording why. */
  resetTimestamps(reason: string): Promise<TimestampRecord>
  listTimestamps(): Promise<TimestampListItem[]>
  /** `trustAnchorsPem`: PEM certificates to check the token against instead of the configured TSA's (local only). */
  verifyTimestamp(trustAnchorsPem?: string[]): Promise<TimestampVerification>
  /** GET /v1/events/<id>/receipt: the COSE Receipt (RFC 9942) of an event, as bytes. */
  receipt(id: string, treeSize?: number): Promise<Buffer>
  /** POST /v1/erasures: the body of docs/api.md. */
  erase(body: unknown): Promise<ErasureResponse>
  /** Throws the server's 401 or 403 when the key may not erase, before anything is asked or announced. */
  checkMayErase(): Promise<void>
  /** The log's origin and signed-note verifier key (GET /v1/log/key); `origin` is for a data directory only. */
  logKey(origin?: string): Promise<{origin: string; verifier_key: string}>
  /** PUT /v1/agents/<agent_id>/keys/<kid> with the public JWK. */
  registerAgentKey(agentId: string, kid: string, jwk: unknown): Promise<KeyChange>
  /** DELETE /v1/agents/<agent_id>/keys/<kid>. */
  revokeAgentKey(agentId: string, kid: string): Promise<KeyChange>
  /** GET /v1/agents/<agent_id>/keys. */
  listAgentKeys(agentId: string): Promise<AgentKeyView[]>
  /** GET /v1/forwarding; on a store, its stored positions (docs/forwarding.md). */
  forwardingStatus(): Promise<DestinationStatus[]>
  /** Held calls (docs/oversight.md): list, read, request (the proxy), decide (a person), close (the proxy). */
  listApprovals(params: QueryParams): Promise<ApprovalView[]>
  getApproval(id: string): Promise<ApprovalView>
  requestApproval(body: unknown): Promise<ApprovalView>
  decideApproval(id: string, body: unknown): Promise<ApprovalView>
  closeApproval(id: string, body: unknown): Promise<ApprovalView>
  /** Calls `listener` with every approval event recorded from now on; resolves to a stop function. */
  watchApprovals(listener: ApprovalEventListener): Promise<() => void>
  /** GET /v1/trails, POST /v1/trails, POST /v1/trails/NAME/seal (docs/trails.md). */
  listTrails(): Promise<TrailInfo[]>
  createTrail(name: string, options: CreateTrailOptions): Promise<TrailInfo>
  sealTrail(name: string): Promise<TrailInfo>
  close(): Promise<void>
}

export interface LocalClientOptions {
  tsa?: {url: string; caPem: string[]}
  /** Make the data directory if it does not exist (commands that record); else it must exist. */
  create?: boolean
  databaseUrl?: string
  /** The trail to work on (docs/trails.md); default: `default`. */
  trail?: string
}

export class LocalClient implements AuditClient {
  private constructor(
    private readonly trails: Trails,
    private readonly services: AuditServices,
  ) {}

  static async open(dataDir: string, options: LocalClientOptions = {}): Promise<LocalClient> {
    const trails = await openTrails({
      dataDir,
      databaseUrl: options.databaseUrl,
      tsa: options.tsa,
      store: {create: options.create ?? false},
    })
    try {
      return new LocalClient(trails, await trails.open(options.trail ?? DEFAULT_TRAIL))
    } catch (error) {
      await trails.close()
      throw error
    }
  }

  ingestBatch(bodies: unknown[]) {
    return this.services.ingest.recordBatch(bodies)
  }

  listEvents(params: QueryParams) {
    return this.services.query.listEvents(params)
  }

  getEvent(id: string) {
    return this.services.query.getEvent(id)
  }

  search(params: QueryParams) {
    return this.services.query.search(params)
  }

  agents() {
    return this.services.query.agents()
  }

  stats() {
    return this.services.query.stats()
  }

  async forwardingStatus() {
    return forwardingStatus(this.services.store)
  }

  verify(agentId?: string): Promise<ChainVerification> {
    return agentId === undefined ? this.services.integrity.verifyAll() : this.services.integrity.verifyAgent(agentId)
  }

  async merkleRoot() {
    return this.services.integrity.merkleRoot()
  }

  async exportPackage(params: QueryParams, out: Writable) {
    const receipts = parseBooleanParam(params, 'receipts')
    await this.services.exporter.writePackage(parseExportQuery(params), out, new Date(), {
      receipts,
      redact: parseRedaction(params),
    })
  }

  checkPolicy(request: unknown) {
    return this.services.policy.checkRequest(request)
  }

  timestamp() {
    return this.services.timestamps.issue()
  }

  resetTimestamps(reason: string) {
    return this.services.timestamps.reset(reason)
  }

  listTimestamps() {
    return this.services.timestamps.list()
  }

  verifyTimestamp(trustAnchorsPem?: string[]) {
    return this.services.timestamps.verifyLatest(trustAnchorsPem)
  }

  async receipt(id: string, treeSize?: number) {
    return (await this.services.receipts.forEvent(id, treeSize)).receipt
  }

  erase(body: unknown) {
    return this.services.erasure.erase(body)
  }

  /** A data directory or database has no keys and no scopes. */
  async checkMayErase() {}

  async logKey(origin?: string) {
    const identity = await openLogIdentity(this.services.store, origin)
    return {origin: identity.origin, verifier_key: identity.verifierKey}
  }

  registerAgentKey(agentId: string, kid: string, jwk: unknown) {
    return this.services.keys.register(agentId, kid, jwk)
  }

  revokeAgentKey(agentId: string, kid: string) {
    return this.services.keys.revoke(agentId, kid)
  }

  listAgentKeys(agentId: string) {
    return this.services.keys.list(agentId)
  }

  listApprovals(params: QueryParams) {
    return this.services.approvals.list(params)
  }

  getApproval(id: string) {
    return this.services.approvals.get(id)
  }

  requestApproval(body: unknown) {
    return this.services.approvals.request(body)
  }

  /** A decision made on the store itself is named by the person at the terminal (docs/oversight.md). */
  decideApproval(id: string, body: unknown) {
    return this.services.approvals.decide(id, body, localDecider())
  }

  closeApproval(id: string, body: unknown) {
    return this.services.approvals.close(id, body)
  }

  async watchApprovals(listener: ApprovalEventListener) {
    const onEvents = (events: StoredEvent[]) => events.forEach(listener)
    this.services.feed.on('events', onEvents)
    return () => void this.services.feed.off('events', onEvents)
  }

  listTrails() {
    return this.trails.list()
  }

  createTrail(name: string, options: CreateTrailOptions) {
    return this.trails.create(name, options)
  }

  sealTrail(name: string) {
    return this.trails.seal(name)
  }

  close() {
    return this.trails.close()
  }
}

function toSearchParams(params: QueryParams): URLSearchParams {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) search.append(key, item)
  }
  return search
}

/**
 * The code of a server's error answer. A code this version does not know (a newer server's) keeps
 * the side of its status, so that a failing server is still one that could not check (exit 3).
 */
export function errorCode(code: string | undefined, status: number): ErrorCode {
  if (code !== undefined && Object.hasOwn(HTTP_STATUS, code)) return code as ErrorCode
  return status >= 500 ? 'internal_error' : 'validation_error'
}

type RequestOptions = {query?: QueryParams; body?: unknown}

const keyPath = (agentId: string, kid: string) =>
  `/v1/agents/${encodeURIComponent(agentId)}/keys/${encodeURIComponent(kid)}`

export class HttpClient implements AuditClient {
  private readonly base: string

  /** With `trail`, every /v1/ request but the trails' own goes to /v1/trails/<trail>/ (docs/trails.md). */
  constructor(
    serverUrl: string,
    private readonly apiKey?: string,
    private readonly trail?: string,
  ) {
    this.base = serverUrl.replace(/\/+$/, '')
  }

  /**
   * One request, answered with a status below 400; an unreachable server and the API's error
   * body (docs/api.md, Errors) each become an AuditError (the server's code, or one on the side of its status).
   */
  private async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const query = options.query ? `?${toSearchParams(options.query)}` : ''
    const headers: Record<string, string> = {accept: 'application/json'}
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    let response: Response
    try {
      response = await fetch(`${this.base}${onTrail(path, this.trail)}${query}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      })
    } catch (error) {
      const plainHttp = plainHttpSentence(this.base, error)
      if (plainHttp !== undefined) throw new AuditError('validation_error', plainHttp, {cause: error})
      const reason = (error as Error & {cause?: Error}).cause?.message ?? (error as Error).message
      throw new AuditError(
        'internal_error',
        `cannot reach the server at ${this.base}: ${reason}; check that it runs and that --server (or ` +
          `AUDIT_TRAIL_SERVER) gives its URL`,
        {cause: error},
      )
    }
    if (response.status < 400) return response
    const body = await this.json(response)
    const error = (body as {error?: {code?: ErrorCode; message?: string; details?: []}} | undefined)?.error
    const code = errorCode(error?.code, response.status)
    let message = error?.message ?? `the server answered ${response.status}`
    if (code === 'forbidden') message = `${message}: ${SCOPE_HINT}`
    // The server failing, not the request: nothing to change on this side but the time.
    else if (code === 'internal_error' || code === 'storage_unavailable')
      message = `${message} (the server at ${this.base} answered ${response.status}: try again later; its log says why)`
    throw new AuditError(code, message, {details: error?.details})
  }

  private async json(response: Response): Promise<unknown> {
    const text = await response.text()
    try {
      return text === '' ? undefined : JSON.parse(text)
    } catch {
      throw new AuditError(
        'internal_error',
        `the server at ${this.base} answered ${response.status} with a body that is not JSON; check that --server ` +
          `gives the URL of an audit-trail server`,
      )
    }
  }

  /** One request and its JSON answer (see send). */
  private async request<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{status: number; headers: Headers; body: T}> {
    const response = await this.send(method, path, options)
    return {status: response.status, headers: response.headers, body: (await this.json(response)) as T}
  }

  async ingestBatch(bodies: unknown[]) {
    const {status, body} = await this.request<BatchItemResult[]>('POST', '/v1/batch', {body: bodies})
    return {status, results: body}
  }

  async listEvents(params: QueryParams) {
    const {headers, body} = await this.request<StoredEvent[]>('GET', '/v1/events', {query: params})
    return {total: Number(headers.get('x-total-count') ?? body.length), events: body}
  }

  async getEvent(id: string) {
    return (await this.request<StoredEvent>('GET', `/v1/events/${encodeURIComponent(id)}`)).body
  }

  async search(params: QueryParams) {
    return (await this.request<SearchResponse>('GET', '/v1/search', {query: params})).body
  }

  async agents() {
    return (await this.request<AgentView[]>('GET', '/v1/agents')).body
  }

  async stats() {
    return (await this.request<StatsView>('GET', '/v1/stats')).body
  }

  async forwardingStatus() {
    return (await this.request<{destinations: DestinationStatus[]}>('GET', '/v1/forwarding')).body.destinations
  }

  async verify(agentId?: string) {
    const query = agentId === undefined ? {} : {agent_id: agentId}
    return (await this.request<ChainVerification>('GET', '/v1/verify', {query})).body
  }

  async merkleRoot() {
    return (await this.request<MerkleRootView>('GET', '/v1/merkle/root')).body
  }

  async exportPackage(params: QueryParams, out: Writable) {
    const response = await this.send('GET', '/v1/export', {query: params})
    if (!response.body) {
      throw new AuditError('internal_error', `the server at ${this.base} sent an export without a body`)
    }
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), out, {end: false})
  }

  async checkPolicy(request: unknown) {
    return (await this.request<PolicyReport>('POST', '/v1/policy/check', {body: request})).body
  }

  async timestamp() {
    return (await this.request<TimestampRecord>('POST', '/v1/timestamp')).body
  }

  async resetTimestamps(reason: string) {
    return (await this.request<TimestampRecord>('POST', '/v1/timestamps/reset', {body: {reason}})).body
  }

  async listTimestamps() {
    return (await this.request<TimestampListItem[]>('GET', '/v1/timestamps')).body
  }

  async verifyTimestamp() {
    return (await this.request<TimestampVerification>('GET', '/v1/timestamps/verify')).body
  }

  async receipt(id: string, treeSize?: number) {
    const query = treeSize === undefined ? undefined : {tree_size: String(treeSize)}
    const response = await this.send('GET', `/v1/events/${encodeURIComponent(id)}/receipt`, {query})
    return Buffer.from(await response.arrayBuffer())
  }

  async erase(body: unknown) {
    return (await this.request<ErasureResponse>('POST', '/v1/erasures', {body})).body
  }

  /**
   * An empty erasure request: the server checks the key and its scope before the body
   * (docs/security.md), so a key that may erase gets 400 for the body and nothing is erased.
   */
  async checkMayErase() {
    try {
      await this.send('POST', '/v1/erasures', {body: {}})
    } catch (error) {
      if (error instanceof AuditError && ['unauthorized', 'forbidden'].includes(error.code)) throw error
    }
  }

  async logKey() {
    return (await this.request<{origin: string; verifier_key: string}>('GET', '/v1/log/key')).body
  }

  async registerAgentKey(agentId: string, kid: string, jwk: unknown) {
    const {status, body} = await this.request<Omit<KeyChange, 'status'>>('PUT', keyPath(agentId, kid), {body: jwk})
    return {status: status as KeyChange['status'], ...body}
  }

  async revokeAgentKey(agentId: string, kid: string) {
    const {status, body} = await this.request<Omit<KeyChange, 'status'>>('DELETE', keyPath(agentId, kid))
    return {status: status as KeyChange['status'], ...body}
  }

  async listAgentKeys(agentId: string) {
    return (await this.request<AgentKeyView[]>('GET', `/v1/agents/${encodeURIComponent(agentId)}/keys`)).body
  }

  async listApprovals(params: QueryParams) {
    return (await this.request<ApprovalView[]>('GET', '/v1/approvals', {query: params})).body
  }

  async getApproval(id: string) {
    return (await this.request<ApprovalView>('GET', `/v1/approvals/${encodeURIComponent(id)}`)).body
  }

  async requestApproval(body: unknown) {
    return (await this.request<ApprovalView>('POST', '/v1/approvals', {body})).body
  }

  async decideApproval(id: string, body: unknown) {
    return (await this.request<ApprovalView>('POST', `/v1/approvals/${encodeURIComponent(id)}`, {body})).body
  }

  async closeApproval(id: string, body: unknown) {
    return (await this.request<ApprovalView>('POST', `/v1/approvals/${encodeURIComponent(id)}/close`, {body})).body
  }

  watchApprovals(listener: ApprovalEventListener) {
    return watchApprovalEvents(this.base, this.apiKey, listener, this.trail)
  }

  async listTrails() {
    return (await this.request<TrailInfo[]>('GET', '/v1/trails')).body
  }

  async createTrail(name: string, options: CreateTrailOptions) {
    if (options.inDatabase !== undefined)
      throw new AuditError(
        'validation_error',
        '--in-database cannot be used with --server: the server reaches its databases itself; run trails create ' +
          'with --database-url on the service database',
      )
    const body = options.origin === undefined ? {name} : {name, origin: options.origin}
    return (await this.request<TrailInfo>('POST', '/v1/trails', {body})).body
  }

  async sealTrail(name: string) {
    return (await this.request<TrailInfo>('POST', `/v1/trails/${encodeURIComponent(name)}/seal`)).body
  }

  async close() {}
}
