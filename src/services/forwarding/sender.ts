/**
 * What a destination's sender does (docs/forwarding.md): delivers a batch of events of one trail,
 * in order, or throws a SendError saying whether trying again can help.
 */
import type {StoredEvent} from '../../core/types.js'

export interface Sender {
  /** Resolves once the destination took every event (as far as its protocol tells). */
  send(events: readonly StoredEvent[], trail: string): Promise<void>
  close(): Promise<void>
}

/** A batch not delivered; `permanent`: the destination refused it and will refuse it again (HTTP 4xx). */
export class SendError extends Error {
  override name = 'SendError'

  constructor(
    message: string,
    readonly permanent = false,
    options?: {cause?: unknown},
  ) {
    super(message, options)
  }
}

/** Each send waits at most this long for the destination (connect, write, answer). */
export const SEND_TIMEOUT_MS = 10_000
