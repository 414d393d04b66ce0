import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED} from '../../cli/base.js'
import {bad, ok, plural} from '../../cli/output.js'
import {readTsaCa} from '../../cli/pem.js'

export default class TimestampsVerify extends AuditCommand {
  static override description =
    'Verify the latest timestamp (signature, certificate, imprint) and that every ' +
    'timestamp since the last reset covers a prefix of the stored events'

  static override flags = {
    'tsa-ca': Flags.string({
      description:
        'PEM trust anchor(s) to check the token against (instead of those known to the data directory: the ' +
        "embedded TSA's and any external TSA's it recorded)",
    }),
  }

  async run() {
    const {flags} = await this.parse(TimestampsVerify)
    if (flags['tsa-ca'] !== undefined)
      this.refuseWithServer(flags, 'tsa-ca', 'a server checks against its own configuration')
    const anchors = flags['tsa-ca'] === undefined ? undefined : await readTsaCa(flags['tsa-ca'])
    const result = await this.withClient(flags, (client) => client.verifyTimestamp(anchors))
    if (!this.jsonEnabled()) {
      // The first line is the verdict the exit code gives: a token that verifies over a tree the
      // stored events no longer extend is a failure, and says so first.
      // No timestamp: nothing anchors the log, which is what this check asks (exit 1, docs/timestamps.md);
      // said as what it is, not as a token that failed.
      if (result.merkle_root === '')
        this.log(
          bad('NOT ANCHORED: no timestamp has been issued yet; anchor the current root with `audit-trail timestamp`'),
        )
      else if (!result.valid) this.log(bad(`INVALID: ${result.error}`))
      else if (!result.consistent) {
        this.log(
          bad(
            `INVALID: the timestamped tree (size ${result.tree_size}) is not a prefix of the stored events: they ` +
              `were changed after it was signed`,
          ),
        )
        this.log(`token: valid, root ${result.merkle_root} signed at ${result.tsa_time}`)
      } else if (!result.series_consistent) {
        this.log(bad(`INVALID: ${result.series_error}`))
        this.log(`latest token: valid, root ${result.merkle_root} signed at ${result.tsa_time}`)
      } else
        this.log(ok(`valid: root ${result.merkle_root} (tree size ${result.tree_size}) signed at ${result.tsa_time}`))
      // With no timestamp there is nothing to compare: "consistent: NO" would read as tampering.
      if (result.merkle_root !== '') {
        this.log(`current root matches: ${result.current_root_matches}`)
        this.log(`consistent with stored events: ${result.consistent ? ok('yes') : bad('NO')}`)
        const series = plural(result.timestamps_checked, 'timestamp')
        const holds = result.series_consistent ? ok('each extends the one before') : bad('NO')
        this.log(`series (${series} checked): ${holds}`)
        const since = result.rewritten_since
        if (since !== null) this.log(bad(`history was rewritten since the timestamp of ${since}`))
        const reset = result.last_reset
        if (reset) {
          this.log(`signed history started over at ${reset.timestamp} (tree size ${reset.tree_size}): ${reset.reason}`)
        }
      }
    }
    if (!result.valid || !result.consistent || !result.series_consistent) process.exitCode = EXIT_FAILED
    return result
  }
}
