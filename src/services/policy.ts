/**
 * POST /v1/policy/check and `audit-trail policy check`: runs a policy document over the stored
 * events in index order, with chain verification and the latest timestamp supplied from storage.
 */
import {APPROVAL_REQUESTED, APPROVALS_AGENT} from '../core/approval/index.js'
import type {AgentScope} from '../core/auth/agent-scope.js'
import {validationError} from '../core/errors.js'
import type {EvidencePackage} from '../core/evidence/package.js'
import {verifyPackage, type PrecomputedHashes} from '../core/evidence/verify.js'
import {packageSignatureReasons} from '../core/evidence/keys.js'
import type {
  AgentVerification,
  LatestTimestamp,
  PolicyDocument,
  PolicyReport,
  PolicyScope,
} from '../core/policy/index.js'
import {checkPolicies, parsePolicyDocument, parsePolicyScope, readsApprovals} from '../core/policy/index.js'
import {Problems, reportUnknownKeys} from '../core/policy/problems.js'
import type {EventHeader} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {Feed} from './feed.js'
import {HeaderCache} from './header-cache.js'
import type {IntegrityService} from './integrity.js'
import type {TimestampService} from './timestamps.js'

export class PolicyService {
  readonly #headers: HeaderCache

  constructor(
    private readonly options: {
      store: EventStore
      integrity: IntegrityService
      timestamps: TimestampService
      feed?: Feed
      defaultPolicy?: PolicyDocument
    },
  ) {
    this.#headers = new HeaderCache(options.store, options.feed)
  }

  /**
   * Reads every event's header into memory now (the server does it after start), so the first check is as fast as
   * later ones.
   */
  warm(): Promise<void> {
    return this.#headers.catchUp()
  }

  /** The request body `{policies?, scope?}`; without `policies`, the default policy of `serve --policy`. */
  async checkRequest(body: unknown, scope?: AgentScope): Promise<PolicyReport> {
    const request = (body ?? {}) as {policies?: unknown; scope?: unknown}
    if (typeof request !== 'object' || Array.isArray(request)) {
      throw validationError([{field: 'body', message: 'must be an object {"policies": [...], "scope": {...}}'}])
    }
    let doc: PolicyDocument
    if (request.policies === undefined) {
      // parsePolicyDocument checks the members of a body that has policies; one without them
      // must not lose a typo (`{"policie": [...]}`) to the server's default policy either.
      const problems = new Problems()
      reportUnknownKeys(request, ['policies', 'scope'], '', problems.reporterFor(''))
      problems.throwIfAny()
    }
    if (request.policies !== undefined) {
      doc = parsePolicyDocument(request)
    } else if (this.options.defaultPolicy) {
      doc = {...this.options.defaultPolicy}
      // The request's scope narrows the file's field by field, as `policy check --agent/--since/
      // --until` do with a file's scope: a request naming only agent_id keeps the file's since.
      if (request.scope !== undefined) doc.scope = parsePolicyScope({...doc.scope, ...parsePolicyScope(request.scope)})
    } else {
      throw validationError([{field: 'policies', message: 'is required (the server was started without --policy)'}])
    }
    return this.check(doc, undefined, scope)
  }

  /** With `scope` (a key bound to agents, docs/security.md), over the events of its agents only. */
  async check(
    doc: PolicyDocument,
    events?: AsyncIterable<readonly EventHeader[]>,
    agentScope?: AgentScope,
  ): Promise<PolicyReport> {
    const {integrity, timestamps} = this.options
    const scope: PolicyScope = doc.scope ?? {}
    // Approvals are events of the service's own agent: a check that reads them reads every agent.
    const narrowed = scope.agent_id !== undefined && !readsApprovals(doc.policies)
    const read = events ?? this.#headers.headers(narrowed ? {agent_id: scope.agent_id} : {})
    const source = agentScope === undefined ? read : withinScope(read, agentScope)
    return checkPolicies(doc, source, {
      now: new Date(),
      // The same verification as /v1/agents' chain_valid: computed from stored content, and
      // cached only until the store changes, so a check does not read every event twice.
      verifyAgents: async (agentIds): Promise<AgentVerification[]> => {
        const results = await integrity.chainResults()
        return agentIds.map(
          (id) => results.get(id) ?? {agent_id: id, valid: false, reason: 'no events stored for this agent'},
        )
      },
      latestTimestamp: async (): Promise<LatestTimestamp | null> => {
        const checked = await timestamps.checkLatestToken()
        if (!checked) return null
        return {
          timestamp: checked.check.genTime ?? checked.latest.timestamp,
          valid: checked.check.valid,
          error: checked.check.error || undefined,
        }
      },
      signatureReasons: () => integrity.signatureReasons(),
    })
  }
}

/**
 * `policy check --package`: the request `{policies, scope}` over an evidence package's events,
 * offline. Chain status and the timestamp come from verifying the package: its first failure
 * marks the agent it names (or every agent, when it names none) as not verifying.
 */
export async function checkPackagePolicy(
  request: unknown,
  pkg: EvidencePackage,
  hashes?: PrecomputedHashes,
): Promise<PolicyReport> {
  const doc = parsePolicyDocument(request)
  const verification = await verifyPackage(pkg, {hashes})
  const failure = verification.failure
  async function* events() {
    yield pkg.events
  }
  return checkPolicies(doc, events(), {
    now: new Date(),
    verifyAgents: async (agentIds): Promise<AgentVerification[]> =>
      agentIds.map((agent_id) => {
        const named = failure && (failure.agent_id === undefined || failure.agent_id === agent_id)
        if (!named) return {agent_id, valid: true}
        const where = {first_invalid_sequence: failure.sequence, first_invalid_event_id: failure.event_id}
        return {agent_id, valid: false, ...where, reason: failure.reason ?? failure.check}
      }),
    latestTimestamp: async (): Promise<LatestTimestamp | null> => {
      if (!pkg.timestamp) return null
      const valid = verification.valid && verification.timestamp !== null
      return {timestamp: pkg.timestamp.timestamp, valid, error: failure?.message}
    },
    signatureReasons: async () => packageSignatureReasons(pkg),
  })
}

/**
 * The headers a bound key's check reads: its agents' events, and of the approvals (events of the
 * service's own agent) the requests for its agents' calls and the decisions on those requests.
 */
async function* withinScope(
  source: AsyncIterable<readonly EventHeader[]>,
  scope: AgentScope,
): AsyncIterable<readonly EventHeader[]> {
  const requests = new Set<string>()
  const kept = (header: EventHeader): boolean => {
    if (scope.matches(header.agent_id)) return true
    if (header.agent_id !== APPROVALS_AGENT) return false
    if (header.action_type !== APPROVAL_REQUESTED) return requests.has(header.labels.approval_id ?? '')
    if (!scope.matches(header.labels.agent_id ?? '')) return false
    requests.add(header.id)
    return true
  }
  for await (const batch of source) {
    const inside = batch.filter(kept)
    if (inside.length > 0) yield inside
  }
}
