import {Flags} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'
import {formatEvents} from '../../cli/format.js'
import {AuditError} from '../../core/errors.js'
import type {QueryParams} from '../../core/query-params.js'

/** The filter flags shared by `events list` and `export`, in the query-parameter names of the API. */
export const filterFlags = {
  agent: Flags.string({description: 'only events of this agent (agent_id)'}),
  'action-type': Flags.string({description: 'only events of this action_type'}),
  'trace-id': Flags.string({description: 'only events of this trace_id (one agent run, e.g. an OpenTelemetry trace)'}),
  'session-id': Flags.string({description: 'only events of this session_id (a conversation)'}),
  since: Flags.string({description: 'only events with timestamp at or after this ISO 8601 time'}),
  until: Flags.string({description: 'only events with timestamp before this ISO 8601 time'}),
  label: Flags.string({description: 'only events with this label, as key=value (repeatable)', multiple: true}),
}

type FilterFlagValues = {
  agent?: string
  'action-type'?: string
  'trace-id'?: string
  'session-id'?: string
  since?: string
  until?: string
  label?: string[]
}

export function filterParams(flags: FilterFlagValues): QueryParams {
  const params: QueryParams = {}
  if (flags.agent !== undefined) params.agent_id = flags.agent
  if (flags['action-type'] !== undefined) params.action_type = flags['action-type']
  if (flags['trace-id'] !== undefined) params.trace_id = flags['trace-id']
  if (flags['session-id'] !== undefined) params.session_id = flags['session-id']
  if (flags.since !== undefined) params.since = flags.since
  if (flags.until !== undefined) params.until = flags.until
  for (const label of flags.label ?? []) {
    const at = label.indexOf('=')
    if (at <= 0) throw new AuditError('validation_error', `--label ${label}: expected key=value`)
    // One value a key, as GET /v1/events takes it: a second would otherwise replace the first unsaid.
    const key = `label.${label.slice(0, at)}`
    if (key in params)
      throw new AuditError(
        'validation_error',
        `--label ${label.slice(0, at)} is given more than once: an event has one value a label`,
      )
    params[key] = label.slice(at + 1)
  }
  return params
}

export default class EventsList extends AuditCommand {
  static override description =
    'List events, oldest first, with the filters of GET /v1/events (--json: the same array of events)'

  static override examples = [
    '<%= config.bin %> events list --agent billing-bot --limit 20',
    '<%= config.bin %> events list --label env=prod --json',
    '<%= config.bin %> events list --trace-id 4bf92f3577b34da6a3ce929d0e0e4736',
  ]

  static override flags = {
    ...filterFlags,
    limit: Flags.string({description: 'at most this many events (1..1000)', default: '100'}),
    offset: Flags.string({description: 'skip this many events', default: '0'}),
  }

  async run() {
    const {flags} = await this.parse(EventsList)
    const result = await this.withClient(flags, (client) =>
      client.listEvents({...filterParams(flags), limit: flags.limit, offset: flags.offset}),
    )
    if (!this.jsonEnabled()) {
      this.log(formatEvents(result.events))
      this.log(`${result.events.length} of ${result.total} matching events`)
    }
    // --json prints what GET /v1/events answers: the array of events (its total is a header there).
    return result.events
  }
}
