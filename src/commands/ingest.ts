import {Args, Flags} from '@oclif/core'
import ora from 'ora'
import {AuditCommand, EXIT_USAGE} from '../cli/base.js'
import {InputError, openInput, readEventInput, type InputItem} from '../cli/read-events.js'
import {bad, canShowProgress, ok, plural, spinnerColour} from '../cli/output.js'
import {cannotRead} from '../cli/next-step.js'
import {AuditError} from '../core/errors.js'
import {assertEventSize, MAX_BATCH_BYTES, MAX_BATCH_EVENTS} from '../services/ingest.js'
import {readPrivateJwk} from '../cli/jwk-file.js'
import {signEvent} from '../core/signature/index.js'

const MAX_REASONS_SHOWN = 20

interface IngestSummary {
  accepted: number
  rejected: number
  rejections: Array<{where: string; reason: string}>
}

/**
 * Connection errors that happen before a byte of the request leaves: the server cannot have seen
 * the batch. (A reset or a timeout after connecting may come after the server read it.)
 */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
])

/** Whether the request failed before it was sent: fetch's error carries the socket's code as a cause. */
function neverSent(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as Error & {code?: unknown}).code
    if (typeof code === 'string' && NOT_SENT.has(code)) return true
    if (cause instanceof AggregateError && cause.errors.some((inner) => neverSent(inner))) return true
  }
  return false
}

/**
 * A batch failed as a whole (the server went away, the store could not write): say how far the
 * input got, so the user knows where to resume. Whether the batch in flight was recorded is known
 * when it was refused or never sent; otherwise events sent with an `id` can simply be sent again
 * (the retry of an `id`, docs/api.md, POST /v1/events).
 */
function stoppedAt(
  error: unknown,
  accepted: number,
  answeredThrough: string | undefined,
  batch: ReadonlyArray<{where: string}>,
): unknown {
  if (!(error instanceof AuditError)) return error
  const unsent = neverSent(error)
  // The server refused the batch as a whole (a 4xx: a bad key, scope or body), or said it could
  // not store it (storage_unavailable and storage_full promise that nothing was recorded).
  // Otherwise (an answer cut off, a 500) it is not known.
  const refused = error.status < 500 || error.code === 'storage_unavailable' || error.code === 'storage_full'
  if (answeredThrough === undefined) {
    // Nothing was recorded at all: the server's sentence says everything, or nothing reached it.
    if (unsent) return new AuditError(error.code, `${error.message}; nothing was sent`, {details: error.details})
    if (refused) return error
  }
  const before =
    answeredThrough === undefined
      ? 'No batch had been answered before'
      : `${accepted} events were recorded before, from the input through ${answeredThrough}`
  const inFlight = `${batch[0]!.where}${batch.length > 1 ? ` to ${batch.at(-1)!.where}` : ''}`
  const fate = unsent ? 'was not sent' : refused ? 'was not recorded' : 'may or may not have been recorded'
  const message = `${error.message}. ${before}; the batch of ${inFlight} ${fate}.`
  return new AuditError(error.code, message, {details: error.details})
}

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
    const summary: IngestSummary = {accepted: 0, rejected: 0, rejections: []}
    const spinner =
      canShowProgress(process.stderr) && !this.jsonEnabled()
        ? ora({text: 'ingesting', stream: process.stderr, color: spinnerColour}).start()
        : undefined
    // Rejections are listed in input order: a line that is not JSON is known at once, an invalid
    // event only when its batch is answered. `ordinal`: the item's place in the input.
    const rejections: Array<{ordinal: number; where: string; reason: string}> = []
    let read = 0
    const reject = (ordinal: number, where: string, reason: string) => {
      summary.rejected++
      rejections.push({ordinal, where, reason})
    }
    const overHttp = this.serverOf(flags) !== undefined
    await this.withClient(
      flags,
      async (client) => {
        let batch: Array<Extract<InputItem, {body: unknown}> & {ordinal: number}> = []
        let batchBytes = 2
        let answeredThrough: string | undefined
        const send = async () => {
          if (batch.length === 0) return
          let results
          try {
            ;({results} = await client.ingestBatch(batch.map((item) => item.body)))
          } catch (error) {
            throw stoppedAt(error, summary.accepted, answeredThrough, batch)
          }
          answeredThrough = batch.at(-1)!.where
          for (const result of results) {
            if ('event' in result) summary.accepted++
            else reject(batch[result.index]!.ordinal, batch[result.index]!.where, result.error.message)
          }
          batch = []
          batchBytes = 2
          if (spinner) spinner.text = `ingesting: ${summary.accepted} accepted, ${summary.rejected} rejected`
        }
        try {
          for await (const item of readEventInput(openInput(args.file))) {
            const ordinal = read++
            if ('error' in item) {
              reject(ordinal, item.where, item.error)
              continue
            }
            if (signingKey !== undefined) {
              try {
                item.body = signEvent(item.body as Record<string, unknown>, signingKey)
              } catch (error) {
                if (!(error instanceof AuditError)) throw error
                reject(ordinal, item.where, error.message)
                continue
              }
            }
            // One event is held to the size the service allows one event, whichever way it goes; over
            // HTTP a batch is also sent before it would pass the server's body limit (a comma an element).
            const bytes = Buffer.byteLength(JSON.stringify(item.body)) + 1
            try {
              assertEventSize(bytes - 1)
            } catch (error) {
              if (!(error instanceof AuditError)) throw error
              reject(ordinal, item.where, error.message)
              continue
            }
            if (overHttp) {
              if (batchBytes + bytes > MAX_BATCH_BYTES) await send()
              batchBytes += bytes
            }
            batch.push({...item, ordinal})
            if (batch.length >= MAX_BATCH_EVENTS) await send()
          }
          await send()
        } catch (error) {
          spinner?.stop()
          if ((error as NodeJS.ErrnoException).syscall !== undefined) {
            const expected = 'a file of events (JSON array, object or NDJSON), or - for stdin'
            process.stderr.write(`Error: ${cannotRead(args.file ?? '-', error, expected)}\n`)
            this.exit(EXIT_USAGE)
          }
          if (error instanceof InputError) {
            const fix = 'give a JSON array, a single JSON object or NDJSON (one event a line)'
            process.stderr.write(`Error: cannot read ${args.file ?? '-'}: ${error.message}; ${fix}\n`)
            this.exit(EXIT_USAGE)
          }
          throw error
        }
      },
      {create: true},
    )
    spinner?.stop()
    summary.rejections = rejections.sort((a, b) => a.ordinal - b.ordinal).map(({where, reason}) => ({where, reason}))
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
    return summary
  }
}
