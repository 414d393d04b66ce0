import {AuditCommand, EXIT_FAILED} from '../../cli/base.js'
import {bad, ok} from '../../cli/output.js'

export default class TimestampsVerify extends AuditCommand {
  static override description = 'Verify the latest timestamp: signature, certificate, imprint, and that its tree is a prefix of the stored events'

  async run() {
    const {flags} = await this.parse(TimestampsVerify)
    const result = await this.withClient(flags, (client) => client.verifyTimestamp())
    if (!this.jsonEnabled()) {
      this.log(result.valid ? ok(`valid: root ${result.merkle_root} (tree size ${result.tree_size}) signed at ${result.tsa_time}`) : bad(`INVALID: ${result.error}`))
      this.log(`current root matches: ${result.current_root_matches}`)
      this.log(`consistent with stored events: ${result.consistent ? ok('yes') : bad('NO')}`)
    }
    if (!result.valid || !result.consistent) process.exitCode = EXIT_FAILED
    return result
  }
}
