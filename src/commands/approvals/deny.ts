import {Args, Flags} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'
import {decisionLine} from '../../cli/approvals.js'

export default class ApprovalsDeny extends AuditCommand {
  static override description =
    'Deny a held tool call: the client gets an error naming the rule and your reason (docs/oversight.md)'

  static override notFound = 'approvals list shows the approvals there are'

  static override examples = [
    '<%= config.bin %> approvals deny 0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091 --server http://127.0.0.1:8080 ' +
      '--reason "ticket 42"',
  ]

  static override args = {id: Args.string({description: 'id of the approval (approvals list)', required: true})}

  static override flags = {
    reason: Flags.string({description: 'why, recorded with the decision (at most 1024 characters)'}),
  }

  async run() {
    const {args, flags} = await this.parse(ApprovalsDeny)
    const body = flags.reason === undefined ? {decision: 'deny'} : {decision: 'deny', reason: flags.reason}
    const approval = await this.withClient(flags, (client) => client.decideApproval(args.id, body))
    if (!this.jsonEnabled()) this.log(decisionLine(approval))
    return approval
  }
}
