/** The shapes of docs/api.md: what a client sends and what the service stores. */

export type Json = null | boolean | number | string | Json[] | {[key: string]: Json}

/** The 64-zero `prev_hash` of an agent's first event (docs/api.md). */
export const GENESIS_HASH = '0'.repeat(64)

/** An event after validation and normalisation (docs/api.md), before the service sequences it. */
export interface EventInput {
  id: string
  agent_id: string
  action_type: string
  action_name: string
  action_status: string
  timestamp: string
  labels: Record<string, string>
  session_id?: string
  trace_id?: string
  span_id?: string
  parent_id?: string
  input?: Json
  output?: Json
  metadata?: Json
  error?: string
  duration_ms?: number
  /** Per payload member, 64 hex characters: the salt of its commitment (docs/verification.md 2). */
  salts?: Partial<Record<PayloadMemberName, string>>
  /** Per payload member, SHA-256(salt || JCS(value)) in hex; absent on hash-version-1 events. */
  commitments?: Partial<Record<PayloadMemberName, string>>
  /** The agent's detached JWS over the event's signing input (docs/signatures.md). */
  signature?: string
}

/** The payload members, committed through salted digests (docs/verification.md 2). */
export type PayloadMemberName = 'input' | 'output' | 'metadata' | 'error'

/** The optional fields of an event, in one list so that every module handles the same set. */
export const OPTIONAL_STRING_FIELDS = ['session_id', 'trace_id', 'span_id', 'parent_id', 'error'] as const
export const OPTIONAL_JSON_FIELDS = ['input', 'output', 'metadata'] as const

/** A stored event: the client's fields plus those the service adds (docs/api.md). */
export interface StoredEvent extends EventInput {
  sequence: number
  prev_hash: string
  recorded_at: string
  hash: string
  index: number
  /** The members erased since, each with the id of its erasure event (docs/erasure.md). */
  erased?: Partial<Record<PayloadMemberName, string>>
  /** Only in an evidence package: the members left out of it (docs/verification.md 4). */
  redacted?: PayloadMemberName[]
}

/**
 * The fields of a stored event that say who did what, when and where it sits, without the
 * payload (input, output, metadata, error) or the hashes: what a policy reads. Scanning these is
 * several times cheaper than scanning whole events.
 */
export type EventHeader = Pick<
  StoredEvent,
  'id' | 'index' | 'agent_id' | 'sequence' | 'action_type' | 'action_name' | 'action_status' | 'timestamp' | 'labels'
>

/**
 * A stored event without `hash` and `index`: what its hash covers (docs/verification.md 2); salts,
 * erasures and redactions are ignored by the hash, and so are payload members once committed.
 */
export type HashedContent = Omit<StoredEvent, 'hash' | 'index'>

/** What a signature says on its own (docs/signatures.md); null stands for an event without one. */
export interface SignatureContent {
  /** The kid its header names (absent when the header could not be read). */
  kid?: string
  /** Why it does not verify; absent when it does (or was not checked). */
  fault?: string
  /** No JWK was known for the kid, so nothing was checked. */
  unchecked?: true
}

/** A validated event and the names of the fields the client actually sent (for idempotent retry, 2.4). */
export interface ValidatedEvent {
  event: EventInput
  sent: ReadonlyArray<keyof EventInput>
  /** What the signature says on its own, when checked before sequencing (docs/signatures.md). */
  signatureCheck?: SignatureContent | null
}

/** Filters of GET /v1/events, combined with AND. `since` inclusive, `until` exclusive. */
export interface EventFilter {
  agent_id?: string
  action_type?: string
  since?: string
  until?: string
  labels?: Record<string, string>
  /** Exact match, so that one agent run (a trace, a conversation) is found in one query. */
  trace_id?: string
  session_id?: string
  /**
   * The agents of a key bound with `agent=` (docs/security.md): an event is inside when its
   * `agent_id` matches one of the patterns, `*` any run of characters. Set from the key, never
   * from a request's parameters.
   */
  agents?: readonly string[]
}

export interface Page {
  limit: number
  offset: number
}

export interface PageResult<T> {
  total: number
  items: T[]
}

export interface AgentHead {
  agent_id: string
  last_sequence: number
  head_hash: string
}

export interface AgentSummary extends AgentHead {
  event_count: number
  first_activity: string
  last_activity: string
}

/** How full the embedded store is (its enforced capacity; absent for a database server). */
export interface StorageUsage {
  backend: 'embedded'
  used_bytes: number
  capacity_bytes: number
  /** From here on the service warns. */
  warning_bytes: number
  /** 'full': appends are refused with 507 storage_full. */
  state: 'ok' | 'warning' | 'full'
}

export interface StoreStats {
  total_events: number
  events_last_24h: number
  active_agents: number
  total_agents: number
  by_action_type: Record<string, number>
  by_action_status: Record<string, number>
  storage?: StorageUsage
}

/** A stored RFC 3161 timestamp of a Merkle root. `token` is base64 DER. */
/** A C2SP checkpoint the log signed, with the witness cosignatures it holds for it. */
export interface CheckpointRecord {
  tree_size: number
  /** The root hash, hex. */
  root: string
  /** The signed note: the checkpoint body, a blank line and the log's signature line. */
  note: string
  /** Witness cosignature lines (C2SP tlog-cosignature), each ending in a newline, in arrival order. */
  cosignatures: string[]
  signed_at: string
}

export interface TimestampRecord {
  merkle_root: string
  tree_size: number
  timestamp: string
  tsa: string
  token: string
  /**
   * Only on a timestamp issued by `timestamps reset`: why the operator started signed history
   * over. Such a timestamp need not extend the one before it; later ones must extend it.
   */
  reset_reason?: string
}
