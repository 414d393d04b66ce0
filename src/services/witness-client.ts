/**
 * The log's side of C2SP tlog-witness v1.0.0: after each new checkpoint, submit it to a witness
 * with the consistency proof from the size the witness holds, and keep the cosignatures it returns.
 *
 * 200: the cosignature lines that verify with the witness's key are stored with the checkpoint.
 * 409 with a size: the witness holds another size; resend from it (once per size it names).
 * Other 4xx: the witness refuses this checkpoint; one line is logged and the log goes on (it never
 * signs again to get around a refusal). Unreachable or 5xx: retried with a growing delay, always
 * with the newest checkpoint, in the background: ingest never waits for a witness.
 */
import {cosignatureVerifier} from '../core/checkpoint/index.js'
import {NoteError, openNote, parseSignatureLine, type NoteVerifier} from '../core/note/index.js'
import type {CheckpointRecord} from '../core/types.js'
import {formatAddCheckpoint, parseSizeAnswer, SIZE_MEDIA_TYPE} from '../core/witness/add-checkpoint-body.js'
import type {EventStore} from '../store/store.js'
import type {TreeView} from './tree-view.js'

const MAX_RESENDS = 3

export interface WitnessTarget {
  /** The witness's submission prefix; requests go to `<url>/add-checkpoint`. */
  url: string
  /** The witness's cosignature verifier key (type 0x04). */
  verifierKey: string
}

interface WitnessClientOptions {
  store: EventStore
  tree: TreeView
  witness: WitnessTarget
  log?: (line: string) => void
  /** First retry delay after a failure (1 s), doubled up to maxDelayMs (60 s). */
  minDelayMs?: number
  maxDelayMs?: number
  timeoutMs?: number
}

export class WitnessClient {
  private readonly verifier: NoteVerifier
  /** The size the witness is believed to hold (0 until it says otherwise). */
  private witnessSize = 0
  private pending: CheckpointRecord | undefined
  private running: Promise<void> | undefined
  private closed = false
  private wake: (() => void) | undefined

  constructor(private readonly options: WitnessClientOptions) {
    this.verifier = cosignatureVerifier(options.witness.verifierKey)
  }

  get name(): string {
    return this.verifier.name
  }

  /** Queues the checkpoint (replacing an older one not yet sent) and returns at once. */
  submit(record: CheckpointRecord): void {
    if (this.closed) return
    this.pending = record
    this.wake?.()
    this.running ??= this.run().finally(() => {
      this.running = undefined
    })
  }

  /** Resolves once nothing is queued or being sent (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  close(): void {
    this.closed = true
    this.wake?.()
  }

  private async run(): Promise<void> {
    let delay = this.options.minDelayMs ?? 1000
    let resends = 0
    while (this.pending && !this.closed) {
      const record = this.pending
      let outcome: 'done' | 'resend' | 'retry'
      try {
        outcome = await this.send(record)
      } catch (error) {
        this.say(`cannot reach ${this.options.witness.url}: ${(error as Error).message}; retrying`)
        outcome = 'retry'
      }
      // A witness that names a new size each time is not followed around forever.
      if (outcome === 'resend' && ++resends <= MAX_RESENDS) continue
      if (outcome === 'resend') {
        this.say(
          `keeps naming other sizes (last ${this.witnessSize}); ` +
            `giving up on the checkpoint of size ${record.tree_size}`,
        )
        outcome = 'done'
      }
      resends = 0
      if (outcome === 'done') {
        if (this.pending === record) this.pending = undefined
        delay = this.options.minDelayMs ?? 1000
        continue
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay)
        timer.unref()
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = undefined
      delay = Math.min(delay * 2, this.options.maxDelayMs ?? 60_000)
    }
  }

  private async send(record: CheckpointRecord): Promise<'done' | 'resend' | 'retry'> {
    const {tree, witness} = this.options
    if (this.witnessSize > record.tree_size) {
      this.say(`holds size ${this.witnessSize}, above the checkpoint of size ${record.tree_size}: not resent`)
      return 'done'
    }
    const oldSize = this.witnessSize
    const proof =
      oldSize === 0 ? [] : await tree.read((t) => t.consistencyProof(oldSize, record.tree_size), record.tree_size)
    const response = await fetch(`${witness.url.replace(/\/+$/, '')}/add-checkpoint`, {
      method: 'POST',
      headers: {'content-type': 'text/plain; charset=utf-8'},
      body: formatAddCheckpoint({oldSize, proof, note: record.note}),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
    })
    const body = await response.text()
    if (response.status === 200) {
      await this.keep(record, body)
      this.witnessSize = record.tree_size
      return 'done'
    }
    if (response.status === 409 && (response.headers.get('content-type') ?? '').startsWith(SIZE_MEDIA_TYPE)) {
      const size = parseSizeAnswer(body)
      if (size !== undefined && size !== oldSize) {
        this.witnessSize = size
        return 'resend'
      }
    }
    if (response.status >= 400 && response.status < 500) {
      this.say(`refused the checkpoint of size ${record.tree_size} (${response.status}): ${firstLine(body)}`)
      return 'done'
    }
    this.say(`answered ${response.status} for the checkpoint of size ${record.tree_size}; retrying`)
    return 'retry'
  }

  /** Stores the cosignature lines of the answer that verify with the witness's key. */
  private async keep(record: CheckpointRecord, answer: string): Promise<void> {
    const body = record.note.slice(0, record.note.lastIndexOf('\n\n') + 1)
    let lines
    try {
      lines = openNote(`${body}\n${answer}`, [this.verifier]).verified.map((signature) => signature.line)
    } catch (error) {
      if (!(error instanceof NoteError)) throw error
      this.say(`answered with no valid cosignature for the checkpoint of size ${record.tree_size}: ${error.message}`)
      return
    }
    // One cosignature per witness and checkpoint: a witness asked again (after a restart) signs
    // the same statement with a new time, which adds nothing.
    const latest = await this.options.store.latestCheckpoint()
    if (latest?.tree_size === record.tree_size && latest.cosignatures.some((line) => this.isMine(line))) return
    await this.options.store.appendCosignatures(record.tree_size, lines)
  }

  private isMine(line: string): boolean {
    try {
      const {signature} = parseSignatureLine(line.replace(/\n$/, ''))
      return signature.name === this.verifier.name && signature.keyId === this.verifier.keyId
    } catch {
      return false
    }
  }

  private say(message: string): void {
    ;(this.options.log ?? ((line) => console.error(line)))(`audit-trail: witness ${this.name}: ${message}`)
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 200)
}
