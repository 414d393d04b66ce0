/**
 * POST /v1/policy/check and `audit-trail policy check`: runs a policy document over the stored
 * events in index order, with chain verification and the latest timestamp supplied from storage.
 */
import {validationError} from '../core/errors.js'
import type {AgentVerification, LatestTimestamp, PolicyDocument, PolicyReport, PolicyScope} from '../core/policy/index.js'
import {checkPolicies, parsePolicyDocument, parsePolicyScope} from '../core/policy/index.js'
import type {StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {IntegrityService} from './integrity.js'
import type {TimestampService} from './timestamps.js'

/** Above this many agents one pass over every event beats one indexed pass per agent. */
const PER_AGENT_VERIFY_LIMIT = 16

export class PolicyService {
  constructor(private readonly options: {store: EventStore; integrity: IntegrityService; timestamps: TimestampService; defaultPolicy?: PolicyDocument}) {}

  /** The request body `{policies?, scope?}`; without `policies`, the default policy of `serve --policy`. */
  async checkRequest(body: unknown): Promise<PolicyReport> {
    const request = (body ?? {}) as {policies?: unknown; scope?: unknown}
    if (typeof request !== 'object' || Array.isArray(request)) {
      throw validationError([{field: 'body', message: 'must be an object {"policies": [...], "scope": {...}}'}])
    }
    let doc: PolicyDocument
    if (request.policies !== undefined) {
      doc = parsePolicyDocument(request)
    } else if (this.options.defaultPolicy) {
      doc = {...this.options.defaultPolicy}
      if (request.scope !== undefined) doc.scope = parsePolicyScope(request.scope)
    } else {
      throw validationError([{field: 'policies', message: 'is required (the server was started without --policy)'}])
    }
    return this.check(doc)
  }

  async check(doc: PolicyDocument, events?: AsyncIterable<StoredEvent>): Promise<PolicyReport> {
    const {store, integrity, timestamps} = this.options
    const scope: PolicyScope = doc.scope ?? {}
    const source = events ?? store.scanEvents({filter: scope.agent_id === undefined ? {} : {agent_id: scope.agent_id}})
    return checkPolicies(doc, source, {
      now: new Date(),
      verifyAgents: async (agentIds): Promise<AgentVerification[]> => {
        if (agentIds.length > PER_AGENT_VERIFY_LIMIT) {
          const all = await integrity.verifyAll()
          const invalid = new Map(all.invalid_agents.map((a) => [a.agent_id, a]))
          return agentIds.map((id) => invalid.get(id) ?? {agent_id: id, valid: true})
        }
        return Promise.all(agentIds.map((id) => integrity.verifyAgent(id)))
      },
      latestTimestamp: async (): Promise<LatestTimestamp | null> => {
        const checked = await timestamps.checkLatestToken()
        if (!checked) return null
        return {timestamp: checked.check.genTime ?? checked.latest.timestamp, valid: checked.check.valid, error: checked.check.error || undefined}
      },
    })
  }
}
