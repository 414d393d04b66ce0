import {Flags} from '@oclif/core'
import ora from 'ora'
import {databaseUrlFlag, dataDirFlag, EXIT_FAILED, exitCodeOf, JsonCommand} from '../cli/base.js'
import {canShowProgress, plural, spinnerColour} from '../cli/output.js'
import {errorSentence, lockedSentence} from '../cli/next-step.js'
import {AuditError} from '../core/errors.js'
import {migrateToPostgres, MigrationMismatch, type MigrationProof, type TrailProof} from '../services/migrate.js'
import {StoreError} from '../store/index.js'

const SERVER_HINT = /; to ask a running server, give --server URL$/

export default class Migrate extends JsonCommand {
  static override description =
    'Copy a data directory into an empty PostgreSQL database, every trail (or the one --trail names) with its ' +
    'identity (TSA, log key, origin, seal), then prove each copy (count, Merkle root, chains, latest timestamp ' +
    'and checkpoint, a witness accepting the next checkpoint)'

  static override examples = [
    '<%= config.bin %> migrate --data-dir ./audit-trail-data --database-url postgres://audit@db.internal/audit',
  ]

  static override flags = {
    'data-dir': dataDirFlag,
    'database-url': {...databaseUrlFlag, required: true} as typeof databaseUrlFlag & {required: true},
    // docs/trails.md, Upgrading: without --trail (or AUDIT_TRAIL_TRAIL) every trail moves, with it that one.
    trail: Flags.string({
      description: 'move only this trail (default: every trail of the data directory)',
      env: 'AUDIT_TRAIL_TRAIL',
    }),
    quiet: Flags.boolean({description: 'no progress line'}),
  }

  async run(): Promise<MigrationProof> {
    const {flags} = await this.parse(Migrate)
    const spinner =
      canShowProgress(process.stderr) && !this.jsonEnabled() && !flags.quiet
        ? ora({text: 'copying', stream: process.stderr, color: spinnerColour}).start()
        : undefined
    let proof: MigrationProof
    try {
      proof = await migrateToPostgres({
        dataDir: flags['data-dir'],
        databaseUrl: flags['database-url']!,
        ...(flags.trail === undefined ? {} : {trail: flags.trail}),
        onProgress: (copied, total, trail) => {
          const percent = total === 0 ? 100 : Math.floor((copied / total) * 100)
          if (spinner) spinner.text = `copying trail ${trail}'s events: ${copied} of ${total} (${percent} %)`
        },
      })
    } catch (error) {
      spinner?.stop()
      // A copy that does not prove equal is a failed check (1), not a usage error.
      if (error instanceof MigrationMismatch) return this.fail(error.message, EXIT_FAILED)
      if (error instanceof StoreError && error.reason === 'locked')
        return this.fail(
          lockedSentence(
            error,
            'stop it (serve included) and run migrate again: unlike the commands that talk to it with --server ' +
              'URL, migrate needs the directory to itself',
          ),
          exitCodeOf(error),
        )
      // Other commands may ask a server instead; migrate copies a directory, so it names the flag to give.
      if (error instanceof AuditError)
        return this.fail(
          errorSentence(error, {given: () => false}).replace(
            SERVER_HINT,
            '; give --data-dir the data directory to copy',
          ),
          exitCodeOf(error),
        )
      throw error
    }
    const events = proof.trails.reduce((sum, trail) => sum + trail.events, 0)
    const timestamps = proof.trails.reduce((sum, trail) => sum + trail.timestamps, 0)
    const copied = `${plural(events, 'event')} and ${plural(timestamps, 'timestamp')}`
    spinner?.succeed(`copied ${plural(proof.trails.length, 'trail')}: ${copied}`)
    if (!this.jsonEnabled())
      for (const trail of proof.trails) {
        this.log(`trail             ${trail.trail}${trail.sealed ? ' (sealed)' : ''}`)
        for (const line of proofLines(trail)) this.log(line)
      }
    return proof
  }

  private fail(message: string, exitCode: number): never {
    process.stderr.write(`Error: ${message}\n`)
    return this.exit(exitCode)
  }
}

/** The proof as aligned lines: what was compared, and with what. */
function proofLines(proof: TrailProof): string[] {
  const {identity, latest_timestamp: stamp, latest_checkpoint: checkpoint} = proof
  const after = proof.checkpoint_after_move
  const moved = [
    identity.embedded_tsa ? 'the embedded TSA' : undefined,
    identity.external_tsa_certificates > 0
      ? plural(identity.external_tsa_certificates, 'external TSA CA certificate')
      : undefined,
    identity.log_key === null ? undefined : `the log key ${identity.log_key}`,
  ].filter((part) => part !== undefined)
  return [
    `events            ${proof.events} (as in the data directory)`,
    `merkle root       ${proof.merkle_root} (as in the data directory)`,
    `chains            ${plural(proof.agents, 'agent')}, all valid`,
    `identity          ${moved.length === 0 ? 'none yet (no timestamp, no checkpoint)' : moved.join(', ')}`,
    `latest timestamp  ${stamp ? `tree size ${stamp.tree_size}, valid against the copied TSA` : 'none'}`,
    `latest checkpoint ${
      checkpoint
        ? `tree size ${checkpoint.tree_size} of ${checkpoint.origin}, valid against the copied log key`
        : 'none'
    }`,
    ...(after
      ? [
          `after the move    checkpoint of tree size ${after.tree_size}, accepted by a witness holding tree size ` +
            `${checkpoint!.tree_size}`,
        ]
      : []),
  ]
}
