/**
 * The `serve --forward*` flags (docs/forwarding.md) read into forwarding options. A malformed URL,
 * an unknown scheme, a bad filter or header stops start-up with a ForwardingError (`bad_destination`) naming the flag.
 */
import {readFile} from 'node:fs/promises'
import {Flags} from '@oclif/core'
import {ForwardingError, parseDestination, parseHeader} from '../services/forwarding/index.js'
import type {ForwardingOptions} from '../services/forwarding/index.js'

export const forwardFlags = {
  forward: Flags.string({
    description:
      'send every event to this destination, at least once and in order (repeatable): syslog+tcp://HOST:PORT, ' +
      'syslog+tls://HOST:PORT, otlp+http://HOST:PORT/v1/logs, or an http(s):// webhook (docs/forwarding.md)',
    multiple: true,
  }),
  'forward-filter': Flags.string({
    description:
      'only events matching these GET /v1/events filters, as a query string (agent_id=a&label.env=prod); ' +
      'once for every --forward, or once per --forward in the same order',
    multiple: true,
    dependsOn: ['forward'],
  }),
  'forward-header': Flags.string({
    description: "'Name: value' header sent to every webhook and OTLP destination (repeatable)",
    multiple: true,
    dependsOn: ['forward'],
  }),
  'forward-ca': Flags.string({
    description: 'PEM CA certificate(s) a syslog+tls receiver must present a certificate of',
    dependsOn: ['forward'],
  }),
  'forward-cert': Flags.string({
    description: 'PEM client certificate for syslog+tls receivers that ask for one',
    dependsOn: ['forward-key'],
  }),
  'forward-key': Flags.string({description: 'PEM private key of --forward-cert', dependsOn: ['forward-cert']}),
}

interface ForwardFlagValues {
  forward?: string[]
  'forward-filter'?: string[]
  'forward-header'?: string[]
  'forward-ca'?: string
  'forward-cert'?: string
  'forward-key'?: string
}

/** The destinations and their options, or undefined without --forward; files read here. */
export async function forwardingOptions(
  flags: ForwardFlagValues,
): Promise<Omit<ForwardingOptions, 'store' | 'feed'> | undefined> {
  const urls = flags.forward ?? []
  if (urls.length === 0) return undefined
  const filters = flags['forward-filter'] ?? []
  if (filters.length > 1 && filters.length !== urls.length)
    throw new ForwardingError(
      'bad_destination',
      `${urls.length} --forward but ${filters.length} --forward-filter: give one for all, or one per --forward`,
    )
  const destinations = urls.map((url, i) => parseDestination(url, filters.length === 1 ? filters[0] : filters[i]))
  const seen = new Set<string>()
  for (const destination of destinations) {
    if (seen.has(destination.id))
      throw new ForwardingError('bad_destination', `--forward ${destination.url} is given twice`)
    seen.add(destination.id)
  }
  const headers = (flags['forward-header'] ?? []).map(parseHeader)
  const tls = {
    ca: await readPem(flags['forward-ca'], '--forward-ca'),
    cert: await readPem(flags['forward-cert'], '--forward-cert'),
    key: await readPem(flags['forward-key'], '--forward-key'),
  }
  return {destinations, headers, tls}
}

async function readPem(file: string | undefined, flag: string): Promise<string | undefined> {
  if (file === undefined) return undefined
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new ForwardingError('bad_destination', `cannot use ${flag} ${file}: ${(error as Error).message}`)
  }
  if (!text.includes('-----BEGIN '))
    throw new ForwardingError('bad_destination', `cannot use ${flag} ${file}: it holds no PEM block`)
  return text
}
