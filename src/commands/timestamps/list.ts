import {AuditCommand} from '../../cli/base.js'
import {formatTable} from '../../cli/output.js'

export default class TimestampsList extends AuditCommand {
  static override description = 'List stored timestamps, oldest first'

  async run() {
    const {flags} = await this.parse(TimestampsList)
    const list = await this.withClient(flags, (client) => client.listTimestamps())
    if (!this.jsonEnabled()) {
      this.log(
        formatTable(
          ['TIMESTAMP', 'TREE SIZE', 'TSA', 'MERKLE ROOT'],
          list.map((t) => [t.timestamp, t.tree_size, t.tsa, t.merkle_root]),
          64,
        ),
      )
      // Where signed history was started over (`timestamps reset`), and why.
      for (const t of list) if (t.reset_reason !== undefined) this.log(`reset at ${t.timestamp}: ${t.reset_reason}`)
    }
    return list
  }
}
