import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED, EXIT_USAGE} from '../cli/base.js'
import {verifyPackage, type PackageVerification} from '../core/evidence/verify.js'
import type {EvidencePackage} from '../core/evidence/package.js'
import {InvalidPackageError, readPackageFile} from '../cli/package-file.js'
import {readTsaCa} from '../cli/pem.js'
import {chainReport, packageReport} from '../cli/verify-report.js'
import {AuditError} from '../core/errors.js'
import type {CheckpointKeys} from '../core/evidence/checkpoint.js'
import {cosignatureVerifier} from '../core/checkpoint/index.js'
import {ed25519NoteVerifier} from '../core/note/index.js'

export default class Verify extends AuditCommand {
  static override notFound = '`audit-trail agents` lists the agents'

  static override description = 'Verify the hash chains of the store, or an evidence package offline'

  static override examples = [
    '<%= config.bin %> verify',
    '<%= config.bin %> verify --agent billing-bot',
    '<%= config.bin %> verify --package evidence.atrail.json --tsa-ca ca.pem',
  ]

  static override flags = {
    agent: Flags.string({description: 'verify only this agent'}),
    package: Flags.string({
      description: 'verify this .atrail.json evidence package offline (no store, no server)',
      exclusive: ['agent'],
    }),
    'tsa-ca': Flags.string({
      description: 'trust anchor(s) for the package timestamp, PEM; default: the certificates inside the package',
      dependsOn: ['package'],
    }),
    'log-key': Flags.string({
      description: "the log's signed-note verifier key: the package checkpoint must be signed by it",
      dependsOn: ['package'],
    }),
    'witness-key': Flags.string({
      description: 'a witness cosignature verifier key (repeatable)',
      multiple: true,
      dependsOn: ['log-key'],
    }),
    'min-witnesses': Flags.integer({
      description: 'how many of the --witness-key witnesses must have cosigned the checkpoint',
      min: 0,
      dependsOn: ['log-key'],
    }),
  }

  async run() {
    const {flags} = await this.parse(Verify)
    const keys = {logKey: flags['log-key'], witnessKeys: flags['witness-key'], minWitnesses: flags['min-witnesses']}
    const result =
      flags.package === undefined
        ? await this.withClient(flags, (client) => client.verify(flags.agent))
        : await this.verifyPackageFile(flags.package, flags['tsa-ca'], keys)
    if (!this.jsonEnabled()) {
      for (const line of 'merkle_root' in result ? packageReport(result) : chainReport(result)) this.log(line)
    }
    if (!result.valid) process.exitCode = EXIT_FAILED
    return result
  }

  private async verifyPackageFile(
    file: string,
    caFile: string | undefined,
    keys: CheckpointKeys,
  ): Promise<PackageVerification> {
    if (this.given('server')) {
      throw new AuditError('validation_error', '--package cannot be used with --server: a package is verified offline')
    }
    try {
      if (keys.logKey !== undefined) ed25519NoteVerifier(keys.logKey)
    } catch (error) {
      const fix = 'give the key `audit-trail keys log` prints (<origin>+<key id>+<base64>)'
      throw new AuditError('validation_error', `cannot use --log-key: ${(error as Error).message}; ${fix}`)
    }
    for (const key of keys.witnessKeys ?? []) {
      try {
        cosignatureVerifier(key)
      } catch (error) {
        const fix = 'give the key `audit-trail witness serve` prints (witness key: <name>+<key id>+<base64>)'
        throw new AuditError('validation_error', `cannot use --witness-key ${key}: ${(error as Error).message}; ${fix}`)
      }
    }
    let pkg: EvidencePackage | InvalidPackageError
    try {
      pkg = await readPackageFile(file)
    } catch (error) {
      if (!(error instanceof InvalidPackageError)) {
        process.stderr.write(`Error: ${(error as Error).message}\n`)
        return this.exit(EXIT_USAGE)
      }
      pkg = error
    }
    const anchors = caFile === undefined ? undefined : await readTsaCa(caFile)
    if (pkg instanceof InvalidPackageError) return invalidPackage(pkg.message)
    return verifyPackage(pkg, {trustAnchorsPem: anchors, ...keys})
  }
}

/** The verdict on a file that is JSON but no package anyone can check: a failed format check. */
function invalidPackage(message: string): PackageVerification {
  const failure = {check: 'format' as const, message}
  const empty = {filters: {}, events_checked: 0, agents: 0, tree_size: 0, merkle_root: ''}
  return {valid: false, ...empty, timestamp: null, checkpoint: null, failure}
}
