import {Args} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'
import {formatTable} from '../../cli/output.js'

export default class AgentKeysList extends AuditCommand {
  static override description = "List an agent's keys with the indexes at which the log registered and revoked them"

  static override args = {agent: Args.string({description: 'agent id', required: true})}

  async run() {
    const {args, flags} = await this.parse(AgentKeysList)
    const keys = await this.withClient(flags, (client) => client.listAgentKeys(args.agent))
    if (!this.jsonEnabled()) {
      if (keys.length === 0) this.log(`agent ${args.agent} has no key: its events need no signature`)
      else
        this.log(
          formatTable(
            ['KID', 'TYPE', 'REGISTERED AT INDEX', 'REVOKED AT INDEX'],
            keys.map((k) => [k.kid, k.jwk?.crv ?? '?', k.registered_index, k.revoked_index ?? '-']),
          ),
        )
    }
    return keys
  }
}
