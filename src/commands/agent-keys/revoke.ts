import {Args} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'

export default class AgentKeysRevoke extends AuditCommand {
  static override description = "Revoke an agent's key: events after the revocation signed with it are refused"

  static override args = {
    agent: Args.string({description: 'agent id', required: true}),
    kid: Args.string({description: 'kid of the key (its RFC 7638 thumbprint)', required: true}),
  }

  async run() {
    const {args, flags} = await this.parse(AgentKeysRevoke)
    const change = await this.withClient(flags, (client) => client.revokeAgentKey(args.agent, args.kid))
    if (!this.jsonEnabled())
      this.log(`key ${args.kid} of agent ${args.agent} revoked at index ${change.key.revoked_index}`)
    return change
  }
}
