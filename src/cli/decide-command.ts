/** `approvals approve` and `approvals deny`: one decision on a held call (docs/oversight.md). */
import {Args, Flags} from '@oclif/core'
import type {ApprovalView} from '../core/approval/index.js'
import {decisionLine} from './approvals.js'
import {AuditCommand} from './base.js'

export abstract class DecideCommand extends AuditCommand {
  static override notFound = 'approvals list shows the approvals there are'

  static override args = {id: Args.string({description: 'id of the approval (approvals list)', required: true})}

  static override flags = {
    reason: Flags.string({description: 'why, recorded with the decision (at most 1024 characters)'}),
  }

  protected abstract readonly decision: 'approve' | 'deny'

  async run(): Promise<ApprovalView> {
    // oclif's parse spreads the class it is given, which drops inherited static args: name them.
    const {baseFlags, flags: ownFlags, args: ownArgs, enableJsonFlag} = DecideCommand
    const {args, flags} = await this.parse({baseFlags, flags: ownFlags, args: ownArgs, enableJsonFlag})
    const body =
      flags.reason === undefined ? {decision: this.decision} : {decision: this.decision, reason: flags.reason}
    const approval = await this.withClient(flags, (client) => client.decideApproval(args.id!, body))
    if (!this.jsonEnabled()) this.log(decisionLine(approval))
    return approval
  }
}
