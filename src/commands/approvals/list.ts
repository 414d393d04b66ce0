import {Flags} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'
import {formatTable} from '../../cli/output.js'
import {APPROVAL_STATES} from '../../core/approval/index.js'
import type {QueryParams} from '../../core/query-params.js'

export default class ApprovalsList extends AuditCommand {
  static override description =
    'List held tool calls and their decisions (docs/oversight.md); --state pending shows those waiting'

  static override examples = [
    '<%= config.bin %> approvals list --server http://127.0.0.1:8080 --state pending',
    '<%= config.bin %> approvals list --database-url postgres://audit@db/audit --agent billing-bot --json',
  ]

  static override flags = {
    state: Flags.string({description: 'only approvals in this state', options: [...APPROVAL_STATES]}),
    agent: Flags.string({description: 'only calls of this agent_id'}),
    since: Flags.string({description: 'only calls held at or after this time (ISO 8601)'}),
    limit: Flags.integer({description: 'the most recent N approvals (1..1000)', default: 100, min: 1, max: 1000}),
  }

  async run() {
    const {flags} = await this.parse(ApprovalsList)
    const params: QueryParams = {limit: String(flags.limit)}
    if (flags.state !== undefined) params.state = flags.state
    if (flags.agent !== undefined) params.agent_id = flags.agent
    if (flags.since !== undefined) params.since = flags.since
    const approvals = await this.withClient(flags, (client) => client.listApprovals(params))
    if (!this.jsonEnabled()) {
      if (approvals.length === 0) this.log(flags.state === 'pending' ? 'no call waits for a decision' : 'no approvals')
      else
        this.log(
          formatTable(
            ['ID', 'STATE', 'AGENT', 'CALL', 'RULE', 'REQUESTED', 'DECIDED BY', 'REASON'],
            approvals.map((a) => [
              a.id,
              a.state,
              a.agent_id,
              a.action_name,
              a.rule,
              a.requested_at,
              a.decision?.decided_by ?? '-',
              a.decision?.reason ?? '-',
            ]),
          ),
        )
    }
    return approvals
  }
}
