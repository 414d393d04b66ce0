import {Args, Flags} from '@oclif/core'
import ora from 'ora'
import {AuditCommand, EXIT_USAGE} from '../cli/base.js'
import {InputError, openInput, readEventInput} from '../cli/read-events.js'
import {bad, canShowProgress, ok, plural, spinnerColour} from '../cli/output.js'
import {cannotRead} from '../cli/next-step.js'
import {readPrivateJwk} from '../cli/jwk-file.js'
import {IngestBatcher, type IngestSummary} from '../cli/ingest-batcher.js'

const MAX_REASONS_SHOWN = 20

export default class Ingest extends AuditCommand {
  static override description = 'Record events from a file or stdin (JSON array, single object or NDJSON)'

  static override examples = [
    '<%= config.bin %> ingest examples/events.ndjson',
    'cat events.json | <%= config.bin %> ingest -',
  ]

  static override args = {
    file: Args.string({description: 'file to read, or - for stdin', default: '-', ignoreStdin: true}),
  }

  static override flags = {
    'sign-with': Flags.string({
      description: 'sign each event with this private JWK of its agent (agent-keys generate writes one)',
    }),
  }

  async run(): Promise<IngestSummary> {
    const {args, flags} = await this.parse(Ingest)
    const signingKey = flags['sign-with'] === undefined ? undefined : await readPrivateJwk(flags['sign-with'])
    const spinner =
      canShowProgress(process.stderr) && !this.jsonEnabled()
        ? ora({text: 'ingesting', stream: process.stderr, color: spinnerColour}).start()
        : undefined
    const overHttp = this.serverOf(flags) !== undefined
    const summary = await this.withClient(
      flags,
      async (client) => {
        const batcher = new IngestBatcher(client, {
          overHttp,
          signingKey,
          progress(accepted, rejected) {
            if (spinner) spinner.text = `ingesting: ${accepted} accepted, ${rejected} rejected`
          },
        })
        try {
          for await (const item of readEventInput(openInput(args.file))) await batcher.add(item)
          await batcher.flush()
        } catch (error) {
          spinner?.stop()
          this.#failReading(args.file ?? '-', error)
        }
        return batcher.summary()
      },
      {create: true},
    )
    spinner?.stop()
    this.#report(summary)
    return summary
  }

  /** The input could not be read (a file) or parsed: exit 2; anything else goes on up. */
  #failReading(file: string, error: unknown): never {
    if ((error as NodeJS.ErrnoException).syscall !== undefined) {
      const expected = 'a file of events (JSON array, object or NDJSON), or - for stdin'
      process.stderr.write(`Error: ${cannotRead(file, error, expected)}\n`)
      this.exit(EXIT_USAGE)
    }
    if (error instanceof InputError) {
      const fix = 'give a JSON array, a single JSON object or NDJSON (one event a line)'
      process.stderr.write(`Error: cannot read ${file}: ${error.message}; ${fix}\n`)
      this.exit(EXIT_USAGE)
    }
    throw error
  }

  #report(summary: IngestSummary): void {
    if (!this.jsonEnabled()) {
      this.log(
        `${ok(`${summary.accepted} accepted`)}, ` +
          `${summary.rejected > 0 ? bad(`${summary.rejected} rejected`) : '0 rejected'}`,
      )
      for (const {where, reason} of summary.rejections.slice(0, MAX_REASONS_SHOWN)) this.log(`  ${where}: ${reason}`)
      if (summary.rejections.length > MAX_REASONS_SHOWN)
        this.log(`  ... and ${summary.rejections.length - MAX_REASONS_SHOWN} more`)
    }
    // A rejected event is an input error (exit 2), said on stderr as every error is; the accepted
    // ones stay recorded.
    if (summary.rejected > 0) {
      const total = summary.accepted + summary.rejected
      const kept = summary.accepted === 0 ? 'none was recorded' : `the ${summary.accepted} accepted are recorded`
      process.stderr.write(
        `Error: ${summary.rejected} of ${plural(total, 'event')} rejected (the reasons are in the ` +
          `${this.jsonEnabled() ? 'JSON output' : 'list above'}); ${kept}; correct the rejected events and ingest ` +
          `only them again\n`,
      )
      process.exitCode = EXIT_USAGE
    }
  }
}
