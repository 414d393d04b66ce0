import {Flags} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'

export default class TimestampsReset extends AuditCommand {
  static override description =
    'Start signed history over after a restore: timestamp the current tree as a new ' +
    'start, with the reason on record (refused while the stored events still extend every timestamp)'

  static override examples = ['<%= config.bin %> timestamps reset --reason "restored from the backup of 2026-11-20"']

  static override flags = {
    reason: Flags.string({description: 'why signed history starts over (kept with the timestamp)', required: true}),
  }

  async run() {
    const {flags} = await this.parse(TimestampsReset)
    const record = await this.withClient(flags, (client) => client.resetTimestamps(flags.reason))
    if (!this.jsonEnabled()) {
      this.log(
        `signed history starts over at tree size ${record.tree_size}: root ${record.merkle_root}, ` +
          `timestamped at ${record.timestamp} by ${record.tsa}`,
      )
      this.log(`reason: ${record.reset_reason}`)
    }
    return record
  }
}
