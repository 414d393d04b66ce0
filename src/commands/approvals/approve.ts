import {DecideCommand} from '../../cli/decide-command.js'

export default class ApprovalsApprove extends DecideCommand {
  static override description = 'Approve a held tool call: the proxy forwards it at once (docs/oversight.md)'

  static override examples = [
    '<%= config.bin %> approvals approve 0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091 --server http://127.0.0.1:8080 ' +
      '--reason "ticket 42"',
  ]

  protected readonly decision = 'approve'
}
