import {AuditCommand} from '../../cli/base.js'

export default class MerkleRoot extends AuditCommand {
  static override description = 'Show the current RFC 9162 Merkle root over every stored event'

  async run() {
    const {flags} = await this.parse(MerkleRoot)
    const root = await this.withClient(flags, (client) => client.merkleRoot())
    if (!this.jsonEnabled()) this.log(`${root.merkle_root}  (tree size ${root.tree_size})`)
    return root
  }
}
