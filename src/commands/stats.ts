import {AuditCommand} from '../cli/base.js'

export default class Stats extends AuditCommand {
  static override description = 'Show aggregate statistics of the audit trail'

  async run() {
    const {flags} = await this.parse(Stats)
    const stats = await this.withClient(flags, (client) => client.stats())
    if (!this.jsonEnabled()) {
      this.log(`total events     ${stats.total_events}`)
      this.log(`last 24 h        ${stats.events_last_24h}`)
      this.log(`active agents    ${stats.active_agents} of ${stats.total_agents}`)
      this.log(`chain health     ${(stats.chain_health * 100).toFixed(1)} %`)
      this.log(`tree size        ${stats.tree_size}`)
      this.log(`merkle root      ${stats.merkle_root}`)
      for (const [type, n] of Object.entries(stats.by_action_type)) this.log(`  ${type.padEnd(15)} ${n}`)
    }
    return stats
  }
}
