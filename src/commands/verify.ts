import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED, EXIT_USAGE} from '../cli/base.js'
import {bad, ok, plural} from '../cli/output.js'
import {verifyPackage, type PackageVerification} from '../core/evidence/verify.js'
import type {EvidencePackage} from '../core/evidence/package.js'
import {InvalidPackageError, readPackageFile} from '../cli/package-file.js'
import {readTsaCa} from '../cli/pem.js'
import {AuditError} from '../core/errors.js'
import type {IndexGap} from '../core/chain/index.js'
import type {EventFilter} from '../core/types.js'
import type {CheckpointKeys} from '../core/evidence/checkpoint.js'
import {cosignatureVerifier} from '../core/checkpoint/index.js'
import {ed25519NoteVerifier} from '../core/note/index.js'

export default class Verify extends AuditCommand {
  static override description = 'Verify the hash chains of the store, or an evidence package offline'

  static override examples = [
    '<%= config.bin %> verify',
    '<%= config.bin %> verify --agent billing-bot',
    '<%= config.bin %> verify --package evidence.atrail.json --tsa-ca ca.pem',
  ]

  static override flags = {
    agent: Flags.string({description: 'verify only this agent'}),
    package: Flags.string({description: 'verify this .atrail.json evidence package offline (no store, no server)', exclusive: ['agent']}),
    'tsa-ca': Flags.string({description: 'trust anchor(s) for the package timestamp, PEM; default: the certificates inside the package', dependsOn: ['package']}),
    'log-key': Flags.string({
      description: 'the log\'s signed-note verifier key: the package checkpoint must be signed by it',
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
    if (flags.package) {
      if (this.given('server')) throw new AuditError('validation_error', '--package cannot be used with --server: a package is verified offline')
      return this.verifyPackageFile(flags.package, flags['tsa-ca'], {logKey: flags['log-key'], witnessKeys: flags['witness-key'], minWitnesses: flags['min-witnesses']})
    }
    const result = (await this.withClient(flags, (client) => client.verify(flags.agent))) as {valid: boolean; invalid_agents?: unknown[]; events_checked: number; agents_checked?: number; reason?: string; first_invalid_sequence?: number; first_invalid_event_id?: string | null; agent_id?: string; index_gap?: IndexGap}
    if (!this.jsonEnabled()) {
      if (result.valid) this.log(ok(`valid: ${plural(result.events_checked, 'event')}${result.agents_checked === undefined ? '' : ` of ${plural(result.agents_checked, 'agent')}`} verified`))
      const invalid = (result.invalid_agents ?? (result.valid ? [] : [result])) as Array<typeof result>
      for (const agent of invalid) {
        const where = agent.first_invalid_event_id === null ? 'missing: removed after it was recorded' : `event ${agent.first_invalid_event_id}`
        this.log(bad(`INVALID: agent ${agent.agent_id}: ${agent.reason} at sequence ${agent.first_invalid_sequence} (${where})`))
      }
      const gap = result.index_gap
      if (gap) this.log(bad(`INVALID: the log skips from index ${gap.expected_index} to ${gap.actual_index} (event ${gap.event_id}): events were removed or renumbered`))
    }
    if (!result.valid) process.exitCode = EXIT_FAILED
    return result
  }

  private async verifyPackageFile(
    file: string,
    caFile: string | undefined,
    keys: CheckpointKeys,
  ): Promise<PackageVerification> {
    try {
      if (keys.logKey !== undefined) ed25519NoteVerifier(keys.logKey)
      for (const key of keys.witnessKeys ?? []) cosignatureVerifier(key)
    } catch (error) {
      throw new AuditError('validation_error', `cannot use the given key: ${(error as Error).message}`)
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
    const result =
      pkg instanceof InvalidPackageError
        ? invalidPackage(pkg.message)
        : await verifyPackage(pkg, {trustAnchorsPem: anchors, ...keys})
    if (!this.jsonEnabled()) {
      if (result.valid) {
        this.log(ok(`valid: ${plural(result.events_checked, 'event')} of ${plural(result.agents, 'agent')}, every hash, chain link and inclusion proof checked against root ${result.merkle_root} (tree size ${result.tree_size})`))
        this.log(`selection: ${describeSelection(result.filters)}`)
        if (result.timestamp) {
          this.log(ok(`timestamp: valid, signed by ${result.timestamp.tsa} at ${result.timestamp.tsa_time} over tree size ${result.timestamp.tree_size}, consistent with the package tree`))
          if (result.timestamp.trust_anchor === 'package') {
            this.log('note: the TSA certificate came from the package itself; this proves integrity relative to the package\'s TSA, not the TSA\'s independence. Pass --tsa-ca with a trust anchor you obtained separately.')
          }
        } else {
          this.log('timestamp: none in the package')
        }
        this.logCheckpoint(result.checkpoint)
      } else {
        const f = result.failure!
        this.log(bad(`INVALID: ${f.message}`))
        if (f.expected !== undefined) this.log(`  expected ${f.expected}`)
        if (f.actual !== undefined) this.log(`  actual   ${f.actual}`)
      }
    }
    if (!result.valid) process.exitCode = EXIT_FAILED
    return result
  }

  private logCheckpoint(checkpoint: PackageVerification['checkpoint']): void {
    if (!checkpoint) return this.log('checkpoint: none in the package')
    const where = `${checkpoint.origin} at tree size ${checkpoint.tree_size}`
    if (!checkpoint.signature_checked) {
      const unchecked = 'its signatures were not checked (give --log-key)'
      return this.log(`checkpoint: ${where}, consistent with the package tree; ${unchecked}`)
    }
    const names = checkpoint.witnesses.join(', ')
    const cosigned = checkpoint.witnesses.length === 0 ? 'no cosignature of a given witness' : `cosigned by ${names}`
    this.log(ok(`checkpoint: signed by the log key of ${where}, ${cosigned}, consistent with the package tree`))
  }
}

/** The verdict on a file that is JSON but no package anyone can check: a failed format check. */
function invalidPackage(message: string): PackageVerification {
  const failure = {check: 'format' as const, message}
  const empty = {filters: {}, events_checked: 0, agents: 0, tree_size: 0, merkle_root: ''}
  return {valid: false, ...empty, timestamp: null, checkpoint: null, failure}
}

/** The package's `filters` in words, for the reader to compare with the selection asked for. */
function describeSelection(filters: EventFilter): string {
  const parts = [
    filters.agent_id !== undefined && `agent_id = ${filters.agent_id}`,
    filters.action_type !== undefined && `action_type = ${filters.action_type}`,
    filters.since !== undefined && `timestamp >= ${filters.since}`,
    filters.until !== undefined && `timestamp < ${filters.until}`,
    ...Object.entries(filters.labels ?? {}).map(([key, value]) => `label ${key} = ${value}`),
  ].filter((part): part is string => typeof part === 'string')
  if (parts.length === 0) return 'every event of the tree (no filter), checked to be complete'
  if (parts.length === 1 && filters.agent_id !== undefined) return `${parts[0]}, the agent's whole chain up to the tree size, checked to be complete`
  return `${parts.join(', ')} (every event checked to be inside it; that none is missing cannot be checked)`
}
