import {Args} from '@oclif/core'
import {TrailCommand} from '../../cli/trail-command.js'

export default class TrailsSeal extends TrailCommand {
  static override description =
    'Seal a trail: it takes no more events, signs a final checkpoint and stays readable and verifiable for good'

  static override examples = ['<%= config.bin %> trails seal q4-2026']

  static override args = {name: Args.string({description: 'the trail to seal', required: true})}

  async run() {
    const {args, flags} = await this.parse(TrailsSeal)
    const trail = await this.withClient(this.withoutTrail(flags), (client) => client.sealTrail(args.name))
    if (!this.jsonEnabled())
      this.log(`trail ${trail.name} is sealed at tree size ${trail.tree_size}: its final checkpoint is signed`)
    return trail
  }
}
