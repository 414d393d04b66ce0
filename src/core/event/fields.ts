/**
 * The members of an event, written once: what a client sends (docs/api.md, POST /v1/events, in the
 * order of its table, which is the stored order), what the hash covers (docs/verification.md 2) and
 * what a stored event carries besides.
 */
import type {EventInput, HashedContent, PayloadMemberName, StoredEvent} from '../types.js'

/** The payload members (docs/verification.md 2): committed through salted digests, erasable. */
/** Agent ids of the service's own events (docs/api.md): a client may not write under them. */
export const RESERVED_AGENT_PREFIX = 'audit-trail:'

export const PAYLOAD_MEMBERS = [
  'input',
  'output',
  'metadata',
  'error',
] as const satisfies ReadonlyArray<PayloadMemberName>

export const CLIENT_FIELDS = [
  'id',
  'agent_id',
  'action_type',
  'action_name',
  'action_status',
  'timestamp',
  'labels',
  'session_id',
  'trace_id',
  'span_id',
  'parent_id',
  'input',
  'output',
  'metadata',
  'error',
  'duration_ms',
  'salts',
  'signature',
] as const satisfies ReadonlyArray<keyof EventInput>

/**
 * Every member the hash can cover (docs/verification.md 2): the client's fields but `salts`, the
 * commitments and what the service adds. An event with commitments leaves its payload members out.
 */
export const HASHED_FIELDS = [
  ...CLIENT_FIELDS.filter((name) => name !== 'salts'),
  'commitments',
  'sequence',
  'prev_hash',
  'recorded_at',
] as const satisfies ReadonlyArray<keyof HashedContent>

/** Members a stored event carries outside its hash: the salts and what erasure marks (docs/erasure.md). */
export const UNHASHED_FIELDS = ['salts', 'erased'] as const satisfies ReadonlyArray<keyof StoredEvent>

/** Every member of a stored event: its hashed content, the salts and erasures, its hash and its index. */
export const STORED_FIELDS = [...HASHED_FIELDS, ...UNHASHED_FIELDS, 'hash', 'index'] as const satisfies ReadonlyArray<
  keyof StoredEvent
>
