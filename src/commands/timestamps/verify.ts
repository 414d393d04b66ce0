import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED} from '../../cli/base.js'
import {bad, ok} from '../../cli/output.js'
import {readTsaCa} from '../../cli/pem.js'

export default class TimestampsVerify extends AuditCommand {
  static override description = 'Verify the latest timestamp: signature, certificate, imprint, and that its tree is a prefix of the stored events'

  static override flags = {
    'tsa-ca': Flags.string({description: 'PEM trust anchor(s) to check the token against (an external TSA\'s CA; by default the embedded TSA\'s)', exclusive: ['server']}),
  }

  async run() {
    const {flags} = await this.parse(TimestampsVerify)
    const anchors = flags['tsa-ca'] === undefined ? undefined : await readTsaCa(flags['tsa-ca'])
    const result = await this.withClient(flags, (client) => client.verifyTimestamp(anchors))
    if (!this.jsonEnabled()) {
      this.log(result.valid ? ok(`valid: root ${result.merkle_root} (tree size ${result.tree_size}) signed at ${result.tsa_time}`) : bad(`INVALID: ${result.error}`))
      this.log(`current root matches: ${result.current_root_matches}`)
      this.log(`consistent with stored events: ${result.consistent ? ok('yes') : bad('NO')}`)
    }
    if (!result.valid || !result.consistent) process.exitCode = EXIT_FAILED
    return result
  }
}
