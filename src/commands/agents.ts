import {AuditCommand} from '../cli/base.js'
import {formatValidity} from '../cli/format.js'
import {formatTable} from '../cli/output.js'

export default class Agents extends AuditCommand {
  static override description = 'List agents with their event counts, last activity and chain status'

  async run() {
    const {flags} = await this.parse(Agents)
    const agents = await this.withClient(flags, (client) => client.agents())
    if (!this.jsonEnabled()) {
      this.log(
        formatTable(
          ['AGENT', 'EVENTS', 'LAST ACTIVITY', 'CHAIN'],
          agents.map((a) => [a.agent_id, a.event_count, a.last_activity, formatValidity(a.chain_valid)]),
        ),
      )
    }
    return agents
  }
}
