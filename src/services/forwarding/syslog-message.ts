/**
 * An event as an RFC 5424 syslog message, framed by octet counting (RFC 6587 3.4.1) for syslog
 * over TCP and TLS (docs/forwarding.md, syslog).
 */
import type {StoredEvent} from '../../core/types.js'

/** RFC 5424 6.2.1: facility 13, "log audit". */
const FACILITY_LOG_AUDIT = 13
/** RFC 5424 6.2.1 severities. */
const SEVERITY = {error: 3, warning: 4, informational: 6}
/** RFC 5424 6.2.5 APP-NAME. */
export const APP_NAME = 'audit-trail'
/**
 * RFC 5424 6.3.2: an SD-ID of our own is `name@<private enterprise number>`. 32473 is the number
 * RFC 5612 reserves for documentation and examples; the project has none of its own.
 */
export const SD_ID = 'atrail@32473'
/** RFC 5424 6.4: a MSG in UTF-8 starts with the byte order mark. */
const BOM = '\uFEFF'

/** Statuses that are not a success but not a fault of the service's either (RFC 5424 severity 4). */
const WARNING_STATUSES = new Set(['failure', 'denied', 'timeout', 'cancelled'])

function severityOf(status: string): number {
  if (status === 'error') return SEVERITY.error
  return WARNING_STATUSES.has(status) ? SEVERITY.warning : SEVERITY.informational
}

/** RFC 5424 6.1: PRINTUSASCII (33..126), at most `max` characters; empty is the NILVALUE `-`. */
function printable(text: string, max: number): string {
  const kept = text.replace(/[^\x21-\x7e]/g, '_').slice(0, max)
  return kept === '' ? '-' : kept
}

/** RFC 5424 6.3.3: in a PARAM-VALUE, `"`, `\` and `]` are escaped with a backslash. */
function paramValue(value: string | number): string {
  return String(value).replace(/["\\\]]/g, (character) => `\\${character}`)
}

/** The STRUCTURED-DATA element naming the event (RFC 5424 6.3). */
function structuredData(event: StoredEvent, trail: string): string {
  const params: [string, string | number][] = [
    ['trail', trail],
    ['index', event.index],
    ['id', event.id],
    ['agent', event.agent_id],
    ['action_type', event.action_type],
    ['action', event.action_name],
    ['status', event.action_status],
    ['hash', event.hash],
  ]
  return `[${SD_ID}${params.map(([name, value]) => ` ${name}="${paramValue(value)}"`).join('')}]`
}

/**
 * The RFC 5424 SYSLOG-MSG of an event: HEADER (PRI, VERSION 1, the event's timestamp, host,
 * APP-NAME, no PROCID, MSGID the action type), the structured data, then the stored event as JSON.
 */
export function syslogMessage(event: StoredEvent, trail: string, hostname: string): string {
  const pri = FACILITY_LOG_AUDIT * 8 + severityOf(event.action_status)
  const header = [
    `<${pri}>1`,
    event.timestamp,
    printable(hostname, 255),
    APP_NAME,
    '-',
    printable(event.action_type, 32),
  ].join(' ')
  return `${header} ${structuredData(event, trail)} ${BOM}${JSON.stringify(event)}`
}

/** RFC 6587 3.4.1: MSG-LEN SP SYSLOG-MSG, MSG-LEN the octet count of the UTF-8 message. */
export function octetCounted(message: string): Buffer {
  const bytes = Buffer.from(message, 'utf8')
  return Buffer.concat([Buffer.from(`${bytes.length} `, 'ascii'), bytes])
}
