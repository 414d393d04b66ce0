import {Args} from '@oclif/core'
import ora from 'ora'
import {AuditCommand, EXIT_USAGE} from '../cli/base.js'
import {InputError, openInput, readEventInput, type InputItem} from '../cli/read-events.js'
import {bad, canShowProgress, ok} from '../cli/output.js'

const BATCH = 1000
const MAX_REASONS_SHOWN = 20

interface IngestSummary {
  accepted: number
  rejected: number
  rejections: Array<{where: string; reason: string}>
}

export default class Ingest extends AuditCommand {
  static override description = 'Record events from a file or stdin (JSON array, single object or NDJSON)'

  static override examples = ['<%= config.bin %> ingest examples/events.ndjson', 'cat events.json | <%= config.bin %> ingest -']

  static override args = {
    file: Args.string({description: 'file to read, or - for stdin', default: '-', ignoreStdin: true}),
  }

  async run(): Promise<IngestSummary> {
    const {args, flags} = await this.parse(Ingest)
    const summary: IngestSummary = {accepted: 0, rejected: 0, rejections: []}
    const spinner = canShowProgress(process.stderr) && !this.jsonEnabled() ? ora({text: 'ingesting', stream: process.stderr}).start() : undefined
    const reject = (where: string, reason: string) => {
      summary.rejected++
      summary.rejections.push({where, reason})
    }
    await this.withClient(flags, async (client) => {
      let batch: Array<Extract<InputItem, {body: unknown}>> = []
      const send = async () => {
        if (batch.length === 0) return
        const {results} = await client.ingestBatch(batch.map((item) => item.body))
        for (const result of results) {
          if ('event' in result) summary.accepted++
          else reject(batch[result.index]!.where, result.error.message)
        }
        batch = []
        if (spinner) spinner.text = `ingesting: ${summary.accepted} accepted, ${summary.rejected} rejected`
      }
      try {
        for await (const item of readEventInput(openInput(args.file))) {
          if ('error' in item) reject(item.where, item.error)
          else batch.push(item)
          if (batch.length >= BATCH) await send()
        }
        await send()
      } catch (error) {
        spinner?.stop()
        if (error instanceof InputError || (error as NodeJS.ErrnoException).syscall !== undefined) {
          process.stderr.write(`Error: cannot read ${args.file}: ${(error as Error).message}\n`)
          this.exit(EXIT_USAGE)
        }
        throw error
      }
    })
    spinner?.stop()
    if (!this.jsonEnabled()) {
      this.log(`${ok(`${summary.accepted} accepted`)}, ${summary.rejected > 0 ? bad(`${summary.rejected} rejected`) : '0 rejected'}`)
      for (const {where, reason} of summary.rejections.slice(0, MAX_REASONS_SHOWN)) this.log(`  ${where}: ${reason}`)
      if (summary.rejections.length > MAX_REASONS_SHOWN) this.log(`  ... and ${summary.rejections.length - MAX_REASONS_SHOWN} more`)
    }
    // A rejected event is an input error (exit 2); the accepted ones stay recorded.
    if (summary.rejected > 0) process.exitCode = EXIT_USAGE
    return summary
  }
}
