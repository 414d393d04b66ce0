import {readFile} from 'node:fs/promises'
import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED, EXIT_USAGE} from '../cli/base.js'
import {verifyPackage, type PackageVerification} from '../core/evidence/verify.js'
import type {EvidencePackage} from '../core/evidence/package.js'
import {InvalidPackageError, readPackageFile} from '../cli/package-file.js'
import {readTsaCa} from '../cli/pem.js'
import {chainReport, disclosureReport, packageReport} from '../cli/verify-report.js'
import {checkDisclosure, parseDisclosures, type Disclosure, type DisclosureVerdict} from '../core/erasure/index.js'
import {AuditError} from '../core/errors.js'
import type {CheckpointKeys} from '../core/evidence/checkpoint.js'
import {cosignatureVerifier} from '../core/checkpoint/index.js'
import {ed25519NoteVerifier} from '../core/note/index.js'

export default class Verify extends AuditCommand {
  static override description = 'Verify the hash chains of the store, or an evidence package offline'

  static override examples = [
    '<%= config.bin %> verify',
    '<%= config.bin %> verify --agent billing-bot',
    '<%= config.bin %> verify --package evidence.atrail.json --tsa-ca ca.pem',
    '<%= config.bin %> verify --package redacted.atrail.json --disclosure input-of-event.json',
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
    disclosure: Flags.string({
      description:
        'a disclosure file ({"event_id", "member", "value", "salt"}, or an array of them): check each against ' +
        "the package's commitment",
      dependsOn: ['package'],
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
        : await this.verifyPackageFile(flags.package, flags['tsa-ca'], keys, flags.disclosure)
    if (!this.jsonEnabled()) {
      for (const line of 'merkle_root' in result ? packageReport(result) : chainReport(result)) this.log(line)
      if ('disclosures' in result) for (const line of disclosureReport(result.disclosures!)) this.log(line)
    }
    if (!result.valid) process.exitCode = EXIT_FAILED
    return result
  }

  private async verifyPackageFile(
    file: string,
    caFile: string | undefined,
    keys: CheckpointKeys,
    disclosureFile?: string,
  ): Promise<PackageVerification & {disclosures?: DisclosureVerdict[]}> {
    if (this.given('server')) {
      throw new AuditError('validation_error', '--package cannot be used with --server: a package is verified offline')
    }
    try {
      if (keys.logKey !== undefined) ed25519NoteVerifier(keys.logKey)
      for (const key of keys.witnessKeys ?? []) cosignatureVerifier(key)
    } catch (error) {
      throw new AuditError('validation_error', `cannot use the given key: ${(error as Error).message}`)
    }
    const disclosures = disclosureFile === undefined ? undefined : await readDisclosures(disclosureFile)
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
    const verdict = await verifyPackage(pkg, {trustAnchorsPem: anchors, ...keys})
    if (disclosures === undefined) return verdict
    // A disclosure is checked against a package that verifies, or not at all.
    const checked = verdict.valid ? disclosures.map((d) => checkDisclosure(pkg.events, d)) : []
    return {...verdict, valid: verdict.valid && checked.every((d) => d.valid), disclosures: checked}
  }
}

/** The disclosures of a file; one that cannot be read or is no disclosure is an input error (exit 2). */
async function readDisclosures(file: string): Promise<Disclosure[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new AuditError('validation_error', `cannot read the disclosure ${file}: ${(error as Error).message}`)
  }
  try {
    return parseDisclosures(JSON.parse(text))
  } catch (error) {
    const reason = error instanceof AuditError ? error.message : `not JSON: ${(error as Error).message}`
    throw new AuditError('validation_error', `the disclosure ${file} is not a disclosure: ${reason}`)
  }
}

/** The verdict on a file that is JSON but no package anyone can check: a failed format check. */
function invalidPackage(message: string): PackageVerification {
  const failure = {check: 'format' as const, message}
  const empty = {filters: {}, events_checked: 0, agents: 0, tree_size: 0, merkle_root: ''}
  return {valid: false, ...empty, timestamp: null, checkpoint: null, failure}
}
