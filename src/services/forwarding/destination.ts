/**
 * What `serve --forward URL` names (docs/forwarding.md): the kind of destination, where it is, the
 * events it takes, and its id. The id is derived from the URL without credentials and the filter,
 * so that a restarted `serve` with the same flags (or another process on the same database) finds
 * the stored position of the same destination.
 */
import {sha256Hex} from '../../core/crypto.js'
import {parseExportQuery, type QueryParams} from '../../core/query-params.js'
import type {EventFilter} from '../../core/types.js'
import {ForwardingError} from './errors.js'

export type DestinationKind = 'syslog' | 'otlp' | 'webhook'

export interface Destination {
  id: string
  kind: DestinationKind
  /** The URL as shown: without user name and password. */
  url: string
  /** Where to connect or post: `syslog+tls://h:p` -> h and p; `otlp+http://...` -> `http://...`. */
  target: {host: string; port: number; tls: boolean; href: string}
  filter: EventFilter
  /** The filter as given (`agent_id=a&label.env=prod`), for status. */
  filterText: string
}

/** RFC 5425 (syslog over TLS) registers 6514; RFC 6587 leaves TCP to custom, and 514 is the usual one. */
const SYSLOG_PORTS = {tcp: 514, tls: 6514}
const FILTER_NAMES = new Set(['agent_id', 'action_type', 'trace_id', 'session_id', 'since', 'until'])

export function parseDestination(text: string, filterText = ''): Destination {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ForwardingError(
      'bad_destination',
      `--forward ${text} is not a URL (for example syslog+tls://siem.example:6514)`,
    )
  }
  const kind = kindOf(url, text)
  const shown = new URL(url.href)
  shown.username = ''
  shown.password = ''
  const tls = ['syslog+tls:', 'otlp+https:', 'https:'].includes(url.protocol)
  const href = shown.href.replace(/^otlp\+/, '')
  const port = url.port === '' ? defaultPort(kind, tls) : Number(url.port)
  if (kind === 'syslog' && url.pathname !== '' && url.pathname !== '/')
    throw new ForwardingError(
      'bad_destination',
      `--forward ${shown.href}: a syslog destination has no path (syslog+tcp://HOST:PORT)`,
    )
  if (url.username !== '' || url.password !== '')
    throw new ForwardingError(
      'bad_destination',
      `--forward ${shown.href}: give credentials with --forward-header, not in the URL`,
    )
  const filter = parseFilterText(filterText)
  const id = sha256Hex(JSON.stringify([shown.href, filterText])).slice(0, 16)
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return {id, kind, url: shown.href, target: {host, port, tls, href}, filter, filterText}
}

function kindOf(url: URL, text: string): DestinationKind {
  if (url.hostname === '') throw new ForwardingError('bad_destination', `--forward ${text} names no host`)
  switch (url.protocol) {
    case 'syslog+tcp:':
    case 'syslog+tls:':
      return 'syslog'
    case 'otlp+http:':
    case 'otlp+https:':
      return 'otlp'
    case 'http:':
    case 'https:':
      return 'webhook'
    default:
      throw new ForwardingError(
        'bad_destination',
        `--forward ${text}: unknown scheme ${url.protocol.slice(0, -1)} (syslog+tcp, syslog+tls, otlp+http, ` +
          'otlp+https, http or https)',
      )
  }
}

function defaultPort(kind: DestinationKind, tls: boolean): number {
  if (kind === 'syslog') return tls ? SYSLOG_PORTS.tls : SYSLOG_PORTS.tcp
  return tls ? 443 : 80
}

/** The filters of GET /v1/events, written as its query string; anything else is refused. */
export function parseFilterText(text: string): EventFilter {
  const params: QueryParams = {}
  for (const [name, value] of new URLSearchParams(text)) {
    if (!FILTER_NAMES.has(name) && !name.startsWith('label.'))
      throw new ForwardingError(
        'bad_destination',
        `--forward-filter ${text}: ${name} is not a filter of GET /v1/events`,
      )
    const held = params[name]
    params[name] = held === undefined ? value : [held, value].flat()
  }
  try {
    return parseExportQuery(params)
  } catch (error) {
    throw new ForwardingError('bad_destination', `--forward-filter ${text}: ${(error as Error).message}`)
  }
}

/** `Name: value` of --forward-header, as HTTP allows it (RFC 9110 5.1 field-name is a token). */
export function parseHeader(text: string): [string, string] {
  const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(text)
  if (!match || /[\r\n\0]/.test(match[2]!)) {
    // The value may be a secret: only the name is repeated, and nothing when there is no colon.
    const name = text.includes(':') ? `${text.slice(0, text.indexOf(':'))}: ` : 'without a colon: '
    throw new ForwardingError('bad_destination', `--forward-header ${name}must be 'Name: value'`)
  }
  return [match[1]!, match[2]!]
}
