/**
 * The members of an event, written once: what a client sends (docs/api.md, POST /v1/events, in the
 * order of its table, which is the stored order), what the hash covers (docs/verification.md 2) and
 * what a stored event carries besides.
 */
import type {EventInput, HashedContent, StoredEvent} from '../types.js'

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
] as const satisfies ReadonlyArray<keyof EventInput>

/** The client's fields and what the service adds to them: the content of the event hash. */
export const HASHED_FIELDS = [
  ...CLIENT_FIELDS,
  'sequence',
  'prev_hash',
  'recorded_at',
] as const satisfies ReadonlyArray<keyof HashedContent>

/** Every member of a stored event: its hashed content, its hash and its index in the log. */
export const STORED_FIELDS = [...HASHED_FIELDS, 'hash', 'index'] as const satisfies ReadonlyArray<keyof StoredEvent>
