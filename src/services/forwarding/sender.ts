/**
 * What a destination's sender does (docs/forwarding.md): delivers a batch of events of one trail,
 * in order, or throws a ForwardingError saying whether trying again can help (`not_delivered`) or not
 * (`refused`).
 */
import type {StoredEvent} from '../../core/types.js'

export interface Sender {
  /** Resolves once the destination took every event (as far as its protocol tells). */
  send(events: readonly StoredEvent[], trail: string): Promise<void>
  close(): Promise<void>
}

/** Each send waits at most this long for the destination (connect, write, answer). */
export const SEND_TIMEOUT_MS = 10_000
