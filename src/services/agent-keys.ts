/**
 * Agents' public keys (docs/signatures.md): PUT and DELETE /v1/agents/<agent_id>/keys/<kid> and
 * `audit-trail agent-keys`, recorded as events of `audit-trail:keys`, and the key state every part
 * asks about: which keys an agent had at an index of the log, who owns a kid. The state is read
 * from the stored key events, so that every process sharing a database answers the same.
 */
import {AuditError, validationError} from '../core/errors.js'
import {checkText, RESERVED_AGENT_PREFIX} from '../core/event/index.js'
import {JwsError} from '../core/jws/errors.js'
import {jwkThumbprint, KID_PATTERN, parsePublicJwk, type SigningJwk} from '../core/jws/jwk.js'
import {
  keyEventBody,
  KEY_REGISTERED,
  KEY_REVOKED,
  KEYS_AGENT,
  KeyTimeline,
  type AgentKey,
} from '../core/signature/index.js'
import type {StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'

/** A key as the API shows it: its JWK and where the log registered (and revoked) it. */
export interface AgentKeyView {
  agent_id: string
  kid: string
  jwk: SigningJwk | null
  registered_index: number
  registered_at: string
  registration_event_id: string
  revoked_index: number | null
  revoked_at: string | null
  revocation_event_id: string | null
}

/** The answer of PUT and DELETE: the key and the event that registered or revoked it. */
export interface KeyChange {
  status: 200 | 201
  key: AgentKeyView
  event: StoredEvent
}

/** What a COSE signed statement's verifier needs to know of a kid (docs/signatures.md). */
interface KeyOwner {
  agentId: string
  jwk: SigningJwk
  registeredIndex: number
  revokedIndex?: number
}

function keyView(key: AgentKey): AgentKeyView {
  return {
    agent_id: key.agentId,
    kid: key.kid,
    jwk: key.jwk ?? null,
    registered_index: key.registeredIndex,
    registered_at: key.registeredAt,
    registration_event_id: key.registrationId,
    revoked_index: key.revokedIndex ?? null,
    revoked_at: key.revokedAt ?? null,
    revocation_event_id: key.revocationId ?? null,
  }
}

/** The agent id of a path: an agent_id a client may write (docs/api.md). */
function checkAgentId(agentId: string): void {
  const problem = checkText(agentId, {max: 256, noControl: true})
  if (problem) throw validationError([{field: 'agent_id', message: problem}])
  if (agentId.startsWith(RESERVED_AGENT_PREFIX)) {
    throw validationError([{field: 'agent_id', message: `must not begin with ${RESERVED_AGENT_PREFIX}`}])
  }
}

function checkKid(kid: string): void {
  if (!KID_PATTERN.test(kid)) {
    throw validationError([{field: 'kid', message: 'must be an RFC 7638 SHA-256 thumbprint (43 base64url characters)'}])
  }
}

interface AgentKeysOptions {
  store: EventStore
  /** Records one of the service's own events (IngestService.recordInternal). */
  record: (body: unknown) => Promise<StoredEvent>
}

export class AgentKeysService {
  readonly #store: EventStore
  readonly #record: (body: unknown) => Promise<StoredEvent>
  #timeline = new KeyTimeline()
  /** Catch-ups run one after the other, each reading what was stored before it began. */
  #reading: Promise<unknown> = Promise.resolve()
  #rereading = false
  /** Registrations and revocations of this process, one at a time (sequencing arbitrates between processes). */
  #changing: Promise<unknown> = Promise.resolve()

  constructor(options: AgentKeysOptions) {
    this.#store = options.store
    this.#record = options.record
  }

  /** The key state with every key event stored when called. */
  current(): Promise<KeyTimeline> {
    const read = this.#reading.then(() => this.#catchUp())
    this.#reading = read.catch(() => undefined)
    return read
  }

  async #catchUp(): Promise<KeyTimeline> {
    // A log shorter than what was read (a data directory replaced) is read again from the start.
    if ((await this.#store.count()) < this.#timeline.nextIndex) this.#timeline = new KeyTimeline()
    const timeline = this.#timeline
    for await (const event of this.#store.scanEvents({filter: {agent_id: KEYS_AGENT}, fromIndex: timeline.nextIndex}))
      timeline.apply(event)
    return timeline
  }

  /**
   * The JWK of a kid as far as this process has read (a kid's JWK never changes). A kid not read
   * yet (registered by another process) has the key events read again in the background, once at
   * a time; meanwhile its signatures are checked under the store's lock instead.
   */
  jwkOf(kid: string): SigningJwk | undefined {
    const key = this.#timeline.owner(kid)
    if (key === undefined && !this.#rereading) {
      this.#rereading = true
      void this.current()
        .catch(() => undefined)
        .finally(() => (this.#rereading = false))
    }
    return key?.jwk
  }

  /**
   * Who owns `kid` and when the log registered (and revoked) it, from the key events read so far
   * (call `current()` first to read the newest); undefined for a kid the log does not know or
   * whose JWK it no longer holds.
   */
  keyOwner(kid: string): KeyOwner | undefined {
    const key = this.#timeline.owner(kid)
    if (key?.jwk === undefined) return undefined
    const owner: KeyOwner = {agentId: key.agentId, jwk: key.jwk, registeredIndex: key.registeredIndex}
    if (key.revokedIndex !== undefined) owner.revokedIndex = key.revokedIndex
    return owner
  }

  /** GET /v1/agents/<agent_id>/keys: the agent's keys in registration order (none: an empty list). */
  async list(agentId: string): Promise<AgentKeyView[]> {
    checkAgentId(agentId)
    return (await this.current()).keysOf(agentId).map(keyView)
  }

  /**
   * PUT /v1/agents/<agent_id>/keys/<kid>: registers the public JWK `body` (201), or answers the
   * registration the log holds (200). A kid belongs to one agent for good: registered for another
   * agent, or revoked, it is a conflict.
   */
  async register(agentId: string, kid: string, body: unknown): Promise<KeyChange> {
    checkAgentId(agentId)
    checkKid(kid)
    let jwk: SigningJwk
    try {
      jwk = parsePublicJwk(body)
    } catch (error) {
      if (!(error instanceof JwsError && error.code === 'bad_jwk')) throw error
      throw validationError([{field: 'body', message: `the JWK ${error.message}`}])
    }
    const thumbprint = jwkThumbprint(jwk)
    const sentKid = (body as {kid?: unknown}).kid
    if (sentKid !== undefined && sentKid !== thumbprint) {
      throw validationError([{field: 'body.kid', message: `must be the key's RFC 7638 thumbprint ${thumbprint}`}])
    }
    if (thumbprint !== kid) {
      throw validationError([{field: 'kid', message: `must be the key's RFC 7638 thumbprint ${thumbprint}`}])
    }
    return this.#change(async () => {
      const known = (await this.current()).owner(kid)
      if (known) return this.#registered(known, agentId)
      const {event, changed} = await this.#recordOrReread(keyEventBody(KEY_REGISTERED, agentId, kid, jwk), kid)
      if (changed) return this.#registered(changed, agentId)
      return {status: 201, key: keyView((await this.current()).owner(kid)!), event: event!}
    })
  }

  /** DELETE /v1/agents/<agent_id>/keys/<kid>: revokes the key (200), or answers the revocation the log holds. */
  async revoke(agentId: string, kid: string): Promise<KeyChange> {
    checkAgentId(agentId)
    checkKid(kid)
    return this.#change(async () => {
      const known = (await this.current()).owner(kid)
      if (known === undefined || known.agentId !== agentId) {
        throw new AuditError('not_found', `agent ${agentId} has no key ${kid}`)
      }
      if (known.revocationId !== undefined) return this.#answer(known, known.revocationId)
      const {event, changed} = await this.#recordOrReread(keyEventBody(KEY_REVOKED, agentId, kid, known.jwk), kid)
      if (changed?.revocationId !== undefined) return this.#answer(changed, changed.revocationId)
      if (changed) throw new AuditError('conflict', `key ${kid} of agent ${agentId} changed while it was revoked`)
      return {status: 200, key: keyView((await this.current()).owner(kid)!), event: event!}
    })
  }

  #change(work: () => Promise<KeyChange>): Promise<KeyChange> {
    const changed = this.#changing.then(work)
    this.#changing = changed.catch(() => undefined)
    return changed
  }

  /**
   * Records a key event; when sequencing refuses it (another process changed the same key first),
   * answers with the key as the log now holds it instead.
   */
  async #recordOrReread(
    body: Record<string, unknown>,
    kid: string,
  ): Promise<{event?: StoredEvent; changed?: AgentKey}> {
    try {
      return {event: await this.#record(body)}
    } catch (error) {
      const key = error instanceof AuditError && error.code === 'conflict' && (await this.current()).owner(kid)
      if (!key) throw error
      return {changed: key}
    }
  }

  /** A registration of a kid the log knows already: the same agent's live key is answered, anything else conflicts. */
  #registered(known: AgentKey, agentId: string): Promise<KeyChange> {
    if (known.agentId !== agentId) {
      throw new AuditError(
        'conflict',
        `key ${known.kid} is registered for agent ${known.agentId}; a key belongs to one agent`,
      )
    }
    if (known.revokedIndex !== undefined) {
      throw new AuditError(
        'conflict',
        `key ${known.kid} of agent ${agentId} was revoked at index ${known.revokedIndex}; a revoked key is not ` +
          'registered again (generate a new one)',
      )
    }
    return this.#answer(known, known.registrationId)
  }

  async #answer(key: AgentKey, eventId: string): Promise<KeyChange> {
    const event = await this.#store.getEvent(eventId)
    if (!event) throw new AuditError('internal_error', `the key event ${eventId} is not stored`)
    return {status: 200, key: keyView(key), event}
  }
}
