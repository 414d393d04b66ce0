import {createInterface} from 'node:readline/promises'
import {Flags} from '@oclif/core'
import {AuditCommand} from '../cli/base.js'
import type {AuditClient} from '../cli/client.js'
import {plural} from '../cli/output.js'
import {parseErasureRequest} from '../core/erasure/index.js'
import {AuditError} from '../core/errors.js'
import type {ErasureResponse} from '../services/erasure.js'
import {filterFlags, filterParams} from './events/list.js'

export default class Erase extends AuditCommand {
  static override description =
    'Erase payload members (input, output, metadata, error) of events by id or by filter; every hash, ' +
    'chain and proof still verifies, and the erasure is recorded as an event of its own'

  static override examples = [
    '<%= config.bin %> erase --id 0190c1a2-7b3c-7d4e-8f90-0123456789ab --reason "GDPR Art. 17 request #4711"',
    '<%= config.bin %> erase --label customer=c-1042 --members input,output --reason "erasure request" --yes',
    '<%= config.bin %> erase --session-id s-77 --reason "user deleted the conversation" --server https://audit:8080',
  ]

  static override flags = {
    id: Flags.string({description: 'an event to erase from (repeatable, up to 10,000)', multiple: true}),
    ...filterFlags,
    reason: Flags.string({description: 'why (recorded in the erasure event, 1 to 1024 characters)', required: true}),
    members: Flags.string({description: 'payload members to erase, comma-separated (default: all four)'}),
    'requested-by': Flags.string({description: 'who asked for the erasure (recorded in the erasure event)'}),
    yes: Flags.boolean({char: 'y', description: 'erase without asking (required when not on a terminal)'}),
  }

  async run(): Promise<ErasureResponse> {
    const {flags} = await this.parse(Erase)
    const params = filterParams(flags)
    const ids = flags.id
    if (ids !== undefined && Object.keys(params).length > 0) {
      throw new AuditError('validation_error', 'give either --id or filters, not both')
    }
    if (ids === undefined && Object.keys(params).length === 0) {
      throw new AuditError('validation_error', 'say what to erase: --id ID (repeatable) or a filter such as --agent')
    }
    const body: Record<string, unknown> = {reason: flags.reason}
    if (ids !== undefined) body.ids = ids
    else body.filter = filterOf(params)
    if (flags.members !== undefined) body.members = flags.members.split(',').map((member) => member.trim())
    if (flags['requested-by'] !== undefined) body.requested_by = flags['requested-by']
    // Checked here first, so that a bad request never reaches the prompt, the store or the server.
    const request = parseErasureRequest(body)
    const result = await this.withClient(flags, async (client) => {
      await client.checkMayErase()
      const count = request.ids?.length ?? (await matching(client, params))
      const what =
        `${request.members.join(', ')} of ` +
        (count === undefined
          ? 'the events matching the filter'
          : plural(count, ids ? 'listed event' : 'matching event'))
      await this.confirm(`This erases ${what}, for good`, flags.yes)
      return client.erase(body)
    })
    if (!this.jsonEnabled()) for (const line of report(result)) this.log(line)
    return result
  }

  /** Says what will be erased; asks on a terminal unless --yes, refuses without one. */
  private async confirm(what: string, yes: boolean): Promise<void> {
    if (yes) {
      process.stderr.write(`${what}.\n`)
      return
    }
    if (!process.stdin.isTTY) {
      throw new AuditError('validation_error', `${what}: confirm with --yes (there is no terminal to ask on)`)
    }
    const prompt = createInterface({input: process.stdin, output: process.stderr})
    const answer = await prompt.question(`${what}. Erase? [y/N] `).finally(() => prompt.close())
    if (!/^y(es)?$/i.test(answer.trim())) throw new AuditError('validation_error', 'not confirmed: nothing was erased')
  }
}

/** The filter object of POST /v1/erasures from the query parameters of `events list` (label.k=v). */
function filterOf(params: Record<string, unknown>): Record<string, unknown> {
  const filter: Record<string, unknown> = {}
  const labels: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(params)) {
    if (key.startsWith('label.')) labels[key.slice('label.'.length)] = value
    else filter[key] = value
  }
  if (Object.keys(labels).length > 0) filter.labels = labels
  return filter
}

/** How many events the filter matches now, or undefined when the key may not read them. */
async function matching(client: AuditClient, params: Record<string, string | string[] | undefined>) {
  try {
    return (await client.listEvents({...params, limit: '1'})).total
  } catch (error) {
    if (error instanceof AuditError && error.code === 'forbidden') return undefined
    throw error
  }
}

function report(result: ErasureResponse): string[] {
  if (result.erasure === null) {
    return [`nothing to erase: ${plural(result.skipped.length, 'event')} skipped, no erasure recorded`]
  }
  const lines = [
    `erased ${plural(result.erased_members, 'member')} of ${plural(result.erased_events, 'event')}: ` +
      `erasure ${result.erasure.id} (index ${result.erasure.index})`,
  ]
  const reasons = new Map<string, number>()
  for (const {reason} of result.skipped) reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
  for (const [reason, n] of reasons) lines.push(`skipped ${plural(n, 'event')}: ${reason.replace(/_/g, ' ')}`)
  return lines
}
