import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED} from '../cli/base.js'
import {AuditError} from '../core/errors.js'
import {readTsaCa} from '../cli/pem.js'

export default class Timestamp extends AuditCommand {
  static override description =
    'Anchor the current Merkle root with an RFC 3161 timestamp (embedded TSA unless --tsa-url)'

  static override examples = [
    '<%= config.bin %> timestamp',
    '<%= config.bin %> timestamp --tsa-url https://freetsa.org/tsr --tsa-ca freetsa-ca.pem',
  ]

  static override flags = {
    'tsa-url': Flags.string({description: 'URL of an external RFC 3161 timestamp authority', dependsOn: ['tsa-ca']}),
    'tsa-ca': Flags.string({description: 'PEM trust anchor(s) of the external TSA', dependsOn: ['tsa-url']}),
  }

  async run() {
    const {flags} = await this.parse(Timestamp)
    if (flags['tsa-url'] !== undefined) this.refuseWithServer(flags, 'tsa-url', 'a server timestamps with its own TSA')
    const tsa = flags['tsa-url'] ? {url: flags['tsa-url'], caPem: await readTsaCa(flags['tsa-ca']!)} : undefined
    const issued = this.withClient(flags, (client) => client.timestamp(), {tsa, create: true})
    const record = await issued.catch((error: unknown) => {
      // Refused because the stored events no longer extend signed history: a failed check (exit 1).
      if (!(error instanceof AuditError) || error.code !== 'conflict') throw error
      process.stderr.write(`Error: ${error.message}\n`)
      return this.exit(EXIT_FAILED)
    })
    if (!this.jsonEnabled())
      this.log(
        `timestamped root ${record.merkle_root} (tree size ${record.tree_size}) at ${record.timestamp} by ` +
          `${record.tsa}`,
      )
    return record
  }
}
