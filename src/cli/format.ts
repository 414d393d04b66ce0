/** Human renderings of the API's shapes, shared by the commands. */
import type {StoredEvent} from '../core/types.js'
import {bad, formatTable, ok} from './output.js'

export function formatEvents(events: StoredEvent[]): string {
  return formatTable(
    ['INDEX', 'TIMESTAMP', 'AGENT', 'SEQ', 'TYPE', 'NAME', 'STATUS', 'ID'],
    events.map((e) => [
      e.index,
      e.timestamp,
      e.agent_id,
      e.sequence,
      e.action_type,
      e.action_name,
      e.action_status,
      e.id,
    ]),
    40,
  )
}

export function formatEvent(event: StoredEvent): string {
  return Object.entries(event)
    .map(([key, value]) => `${key.padEnd(14)} ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join('\n')
}

export function formatValidity(valid: boolean): string {
  return valid ? ok('valid') : bad('INVALID')
}
