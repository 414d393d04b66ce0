import {Flags} from '@oclif/core'
import ora from 'ora'
import {databaseUrlFlag, dataDirFlag, EXIT_FAILED, EXIT_USAGE, JsonCommand} from '../cli/base.js'
import {canShowProgress, spinnerColour} from '../cli/output.js'
import {AuditError} from '../core/errors.js'
import {migrateToPostgres, type MigrationProof} from '../services/migrate.js'
import {DatabaseError, DataDirError, StoreLockedError} from '../store/index.js'

export default class Migrate extends JsonCommand {
  static override description =
    'Copy a data directory into an empty PostgreSQL database, then prove the copy (count, Merkle root, chains, ' +
    'latest timestamp)'

  static override examples = [
    '<%= config.bin %> migrate --data-dir ./audit-trail-data --database-url postgres://audit@db.internal/audit',
  ]

  static override flags = {
    'data-dir': dataDirFlag,
    'database-url': {...databaseUrlFlag, required: true} as typeof databaseUrlFlag & {required: true},
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
        onProgress: (copied, total) => {
          const percent = total === 0 ? 100 : Math.floor((copied / total) * 100)
          if (spinner) spinner.text = `copying events: ${copied} of ${total} (${percent} %)`
        },
      })
    } catch (error) {
      spinner?.stop()
      // A copy that does not prove equal is a failed check (1), not a usage error.
      if (error instanceof AuditError && error.code === 'internal_error') {
        process.stderr.write(`Error: ${error.message}\n`)
        return this.exit(EXIT_FAILED)
      }
      if (
        error instanceof AuditError ||
        error instanceof DatabaseError ||
        error instanceof DataDirError ||
        error instanceof StoreLockedError
      ) {
        process.stderr.write(`Error: ${error.message}\n`)
        return this.exit(EXIT_USAGE)
      }
      throw error
    }
    spinner?.succeed(`copied ${proof.events} events and ${proof.timestamps} timestamps`)
    if (!this.jsonEnabled()) {
      this.log(`events           ${proof.events} (as in the data directory)`)
      this.log(`merkle root      ${proof.merkle_root} (as in the data directory)`)
      this.log(`chains           ${proof.agents} agents, all valid`)
      this.log(
        `latest timestamp ${proof.latest_timestamp ? `tree size ${proof.latest_timestamp.tree_size}, valid` : 'none'}`,
      )
    }
    return proof
  }
}
