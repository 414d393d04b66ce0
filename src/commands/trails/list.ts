import {TrailCommand} from '../../cli/trail-command.js'
import {formatTable} from '../../cli/output.js'

export default class TrailsList extends TrailCommand {
  static override description = 'List the trails of this service, default first (--json adds their verifier keys)'

  async run() {
    const {flags} = await this.parse(TrailsList)
    const trails = await this.withClient(this.withoutTrail(flags), (client) => client.listTrails())
    if (!this.jsonEnabled())
      this.log(
        formatTable(
          ['NAME', 'TREE SIZE', 'STATE', 'ORIGIN'],
          trails.map((t) => [t.name, t.tree_size, t.sealed ? 'sealed' : 'open', t.origin]),
          80,
        ),
      )
    return trails
  }
}
