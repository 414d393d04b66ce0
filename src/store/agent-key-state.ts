/**
 * The agents' keys a store hands to sequencing (core/event/sequence.ts), kept up to date under the
 * store's write lock: the head of `audit-trail:keys`, read there with the other heads, says whether
 * key events were recorded since (by this process or another), and only those are read.
 */
import {KEYS_AGENT, KeyTimeline} from '../core/signature/index.js'
import type {AgentHead, StoredEvent} from '../core/types.js'

export class KeyState {
  #timeline = new KeyTimeline()

  /**
   * The timeline of every key event up to `head` (the recorded head of `audit-trail:keys`, read
   * under the lock), reading with `readAfter(sequence)` the events of that agent after a sequence,
   * in sequence order. A head behind what is held (a store rewritten) starts over.
   */
  async upTo(
    heads: ReadonlyMap<string, AgentHead>,
    readAfter: (sequence: number) => Promise<StoredEvent[]>,
  ): Promise<KeyTimeline> {
    const last = heads.get(KEYS_AGENT)?.last_sequence ?? 0
    if (last < this.#timeline.sequence) this.#timeline = new KeyTimeline()
    if (last > this.#timeline.sequence) {
      for (const event of await readAfter(this.#timeline.sequence)) this.#timeline.apply(event)
    }
    return this.#timeline
  }
}
