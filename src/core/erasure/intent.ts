/**
 * An erasure (docs/erasure.md) as the log records it: an event of the service's own agent
 * `audit-trail:erasures` whose `metadata` names the reason, who asked and what it covers, and the
 * intent the store applies, which is read back from that event. So whoever holds the event (the
 * store, a package's `erasures`) can tell whether an erased member was erased by it.
 */
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import {inSelection} from '../evidence/selection.js'
import type {EventFilter, PayloadMemberName, StoredEvent} from '../types.js'

export const ERASURE_AGENT = 'audit-trail:erasures'
export const ERASURE_ACTION_TYPE = 'ERASURE'
/** `action_name` of an erasure asked for (POST /v1/erasures) and of one made by payload retention. */
export const ERASE_ACTION = 'payload.erase'
export const RETENTION_ACTION = 'payload.retention'

/**
 * What a store erases: `members` of the events listed in `ids` (each with the members to erase),
 * or of the events among the first `before_index` that `filter` selects (and, for retention, that
 * were recorded before `recorded_before`). `id` is the erasure event's.
 */
export interface ErasureIntent {
  id: string
  members: PayloadMemberName[]
  ids?: Record<string, PayloadMemberName[]>
  filter?: EventFilter
  recorded_before?: string
  before_index?: number
}

/** The erasure event's `metadata`: the intent's coverage with the reason, the requester and the count. */
export interface ErasureMetadata {
  reason: string
  requested_by?: string
  members: PayloadMemberName[]
  ids?: Record<string, PayloadMemberName[]>
  filter?: EventFilter
  recorded_before?: string
  before_index?: number
  /** For a selection: how many events it erased from. */
  count?: number
}

/** The event body recorded for an erasure (IngestService.recordInternal validates it as any event). */
export function erasureEventBody(id: string, action: string, metadata: ErasureMetadata): Record<string, unknown> {
  return {id, agent_id: ERASURE_AGENT, action_type: ERASURE_ACTION_TYPE, action_name: action, metadata}
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const isMemberList = (value: unknown): value is PayloadMemberName[] =>
  Array.isArray(value) && value.every((m) => (PAYLOAD_MEMBERS as readonly unknown[]).includes(m))

/** The intent an erasure event records, or undefined when the event is no well-formed erasure. */
export function intentOf(event: StoredEvent): ErasureIntent | undefined {
  if (event.agent_id !== ERASURE_AGENT || event.action_type !== ERASURE_ACTION_TYPE) return undefined
  const metadata = event.metadata
  if (!isObject(metadata) || !isMemberList(metadata.members)) return undefined
  const intent: ErasureIntent = {id: event.id, members: metadata.members}
  if (isObject(metadata.ids)) {
    if (!Object.values(metadata.ids).every(isMemberList)) return undefined
    intent.ids = metadata.ids as Record<string, PayloadMemberName[]>
    return intent
  }
  if (!isObject(metadata.filter) || !Number.isSafeInteger(metadata.before_index)) return undefined
  intent.filter = metadata.filter as EventFilter
  intent.before_index = metadata.before_index as number
  if (typeof metadata.recorded_before === 'string') intent.recorded_before = metadata.recorded_before
  return intent
}

/** Whether an erasure's intent covers `member` of `event` (the check of docs/verification.md 10). */
export function covers(intent: ErasureIntent, event: StoredEvent, member: PayloadMemberName): boolean {
  if (intent.ids !== undefined) return Object.hasOwn(intent.ids, event.id) && intent.ids[event.id]!.includes(member)
  return (
    intent.members.includes(member) &&
    event.index < (intent.before_index ?? 0) &&
    (intent.recorded_before === undefined || Date.parse(event.recorded_at) < Date.parse(intent.recorded_before)) &&
    inSelection(event, intent.filter ?? {})
  )
}
