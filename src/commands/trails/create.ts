import {Args, Flags} from '@oclif/core'
import {TrailCommand} from '../../cli/trail-command.js'
import {TRAIL_NAME_RULE} from '../../core/trail/name.js'

export default class TrailsCreate extends TrailCommand {
  static override description =
    'Create a trail: a transparency log of its own (origin, log key, tree, chains) in this service (docs/trails.md)'

  static override examples = [
    '<%= config.bin %> trails create payments',
    '<%= config.bin %> trails create q1-2027 --origin audit.example.com/q1-2027',
    '<%= config.bin %> trails create tenant-a --database-url postgres://audit@db/audit --in-database ' +
      'postgres://audit@db2/tenant_a',
  ]

  static override args = {name: Args.string({description: TRAIL_NAME_RULE, required: true})}

  static override flags = {
    origin: Flags.string({description: "the trail's checkpoint origin (default: the service's origin, /, the name)"}),
    'in-database': Flags.string({
      description: "PostgreSQL only: put the trail's tables in this database, recorded in the service's database",
    }),
  }

  async run() {
    const {args, flags} = await this.parse(TrailsCreate)
    const options = {origin: flags.origin, inDatabase: flags['in-database']}
    const trail = await this.withClient(this.withoutTrail(flags), (client) => client.createTrail(args.name, options), {
      create: true,
    })
    if (!this.jsonEnabled()) {
      this.log(`created trail ${trail.name}`)
      this.log(`origin        ${trail.origin}`)
      this.log(`verifier key  ${trail.verifier_key}`)
    }
    return trail
  }
}
