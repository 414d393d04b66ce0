import {AuditCommand} from '../cli/base.js'
import type {StorageUsage} from '../core/types.js'

/** How full the embedded store is, with what happens at its capacity when that is near. */
function storageLine(storage: StorageUsage): string {
  const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`
  const percent = ((100 * storage.used_bytes) / storage.capacity_bytes).toFixed(1)
  const line = `${mib(storage.used_bytes)} of ${mib(storage.capacity_bytes)} (${percent} %)`
  if (storage.state === 'ok') return line
  const state = storage.state === 'full' ? 'full, events are refused' : 'nearly full'
  return `${line}: ${state}; move to PostgreSQL with audit-trail migrate`
}

export default class Stats extends AuditCommand {
  static override description = 'Show aggregate statistics of the audit trail'

  async run() {
    const {flags} = await this.parse(Stats)
    const stats = await this.withClient(flags, (client) => client.stats())
    if (!this.jsonEnabled()) {
      this.log(`total events     ${stats.total_events}`)
      // Counted by recorded_at (when the log received an event), not by the event's own timestamp.
      this.log(`recorded in 24 h ${stats.events_last_24h} (by recorded_at: when the log received them)`)
      this.log(
        `active agents    ${stats.active_agents} of ${stats.total_agents} (with an event recorded in the last 24 h)`,
      )
      this.log(`chain health     ${(stats.chain_health * 100).toFixed(1)} %`)
      this.log(`tree size        ${stats.tree_size}`)
      this.log(`merkle root      ${stats.merkle_root}`)
      if (stats.storage) this.log(`storage          ${storageLine(stats.storage)}`)
      this.printCounts('by action type', stats.by_action_type)
      this.printCounts('by status', stats.by_action_status)
    }
    return stats
  }

  /** One heading, then a count a line, largest first (ties by name), so the common ones lead. */
  private printCounts(heading: string, counts: Record<string, number>) {
    const rows = Object.entries(counts).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1))
    if (rows.length === 0) return
    this.log(heading)
    const width = Math.max(...rows.map(([name]) => name.length))
    for (const [name, n] of rows) this.log(`  ${name.padEnd(width)}  ${n}`)
  }
}
