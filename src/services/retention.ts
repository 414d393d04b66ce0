/**
 * Payload retention (`serve --payload-retention 400d`, docs/erasure.md): every hour the payload
 * members of events recorded longer ago than the retention are erased, as one erasure event of
 * action `payload.retention`, so a log keeps who did what for as long as it lives while the prompts,
 * arguments and answers in it are kept only so long. Processes sharing a database take turns
 * (store.claimTurn): one of them runs it each period.
 */
import {formatDuration} from '../core/policy/index.js'
import type {EventStore} from '../store/store.js'
import type {ErasureResponse, ErasureService} from './erasure.js'

/** How often retention runs: well within the "at least daily" of docs/erasure.md. */
const RETENTION_EVERY_MS = 60 * 60 * 1000

export class PayloadRetention {
  #timer: NodeJS.Timeout | undefined
  #running: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly options: {
      store: EventStore
      erasure: ErasureService
      retentionMs: number
      everyMs?: number
      /** Told of each run's erasure and of failures (default: stderr). */
      log?: (line: string) => void
    },
  ) {}

  /** Runs once now, then every period; the timer does not keep the process alive. */
  start(): void {
    const every = this.options.everyMs ?? RETENTION_EVERY_MS
    const run = () => {
      this.#running = this.#running.then(() =>
        this.run().catch((error: unknown) => this.#log(`failed: ${(error as Error).message}`)),
      )
    }
    run()
    this.#timer = setInterval(run, every)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#running
  }

  /** One run at `now`, when this process has the turn: what it erased, or undefined (not its turn). */
  async run(now: Date = new Date()): Promise<ErasureResponse | undefined> {
    const every = this.options.everyMs ?? RETENTION_EVERY_MS
    // A little under the period, as timers drift; a single process always has the turn.
    const turn = (await this.options.store.claimTurn?.('payload-retention', every * 0.9)) ?? true
    if (!turn) return undefined
    const retention = formatDuration(this.options.retentionMs)
    const cutoff = new Date(now.getTime() - this.options.retentionMs).toISOString()
    const result = await this.options.erasure.eraseRecordedBefore(
      cutoff,
      `payload retention: payloads recorded more than ${retention} ago`,
      `audit-trail serve --payload-retention`,
    )
    if (result.erasure !== null) {
      this.#log(
        `erased the payload of ${result.erased_events} events recorded before ${cutoff} (erasure ${result.erasure.id})`,
      )
    }
    return result
  }

  #log(line: string): void {
    ;(this.options.log ?? ((text: string) => process.stderr.write(`${text}\n`)))(
      `audit-trail: payload retention ${line}`,
    )
  }
}
