import {writeFile} from 'node:fs/promises'
import {Args, Flags} from '@oclif/core'
import {AuditCommand} from '../cli/base.js'
import {decodeReceipt} from '../core/cose/index.js'
import {AuditError} from '../core/errors.js'

export default class Receipt extends AuditCommand {
  static override description =
    'Write the COSE Receipt (RFC 9942) of an event: proof, signed with the log key, that the event is in the log'

  static override examples = [
    '<%= config.bin %> receipt 0190f1c2-7c1e-7d3a-9f00-5a1b2c3d4e5f -o event.cose',
    '<%= config.bin %> receipt 0190f1c2-7c1e-7d3a-9f00-5a1b2c3d4e5f --tree-size 1000 -o event.cose',
  ]

  static override args = {id: Args.string({description: 'event id (UUID)', required: true})}

  static override flags = {
    output: Flags.string({char: 'o', description: 'file to write (default: <event id>.cose; - for stdout)'}),
    'tree-size': Flags.integer({
      description: 'the tree the receipt is for (default: the latest signed checkpoint holding the event)',
      min: 1,
    }),
  }

  async run() {
    const {args, flags} = await this.parse(Receipt)
    const file = flags.output ?? `${args.id}.cose`
    if (file === '-' && this.jsonEnabled())
      throw new AuditError('validation_error', '--json cannot go with -o -: the receipt itself is written to stdout')
    const receipt = await this.withClient(flags, (client) => client.receipt(args.id, flags['tree-size']))
    const [proof] = decodeReceipt(receipt).proofs
    if (file === '-') {
      process.stdout.write(receipt)
    } else {
      try {
        await writeFile(file, receipt)
      } catch (error) {
        throw new AuditError('validation_error', `cannot write ${file}: ${(error as Error).message}`)
      }
      if (!this.jsonEnabled())
        this.log(`wrote ${file}: leaf ${proof!.leafIndex} of the tree of ${proof!.treeSize} events`)
    }
    return {file, event_id: args.id, leaf_index: proof!.leafIndex, tree_size: proof!.treeSize}
  }
}
