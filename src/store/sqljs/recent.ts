/**
 * `events_last_24h` of GET /v1/stats (docs/api.md) without an index on recorded_at (it
 * would cost 37 bytes and one more B-tree insert per event). The service stamps recorded_at at
 * receipt, so it ascends with index and the recent events are a suffix of the log, found by binary
 * search. Should an event ever arrive stamped earlier than the one before it (the clock stepped
 * back), the store marks that in store_meta for good and counts by a full scan instead.
 */
import type {StoredEvent} from '../../core/types.js'

export interface RecentSource {
  /** The first row with an index >= `index`: [index, recorded_at], or undefined past the end. */
  firstFrom(index: number): [number, string] | undefined
  /** Rows with an index >= `index`. */
  countFrom(index: number): number
  /** Rows with recorded_at >= `since`, by scanning. */
  countScanning(since: string): number
}

export class RecordedOrder {
  constructor(
    private latest: string,
    private ascending: boolean,
  ) {}

  get isAscending(): boolean {
    return this.ascending
  }

  /** Whether appending these events would be the first to break the order (observe does not change). */
  wouldBreakOrder(events: readonly StoredEvent[]): boolean {
    if (!this.ascending) return false
    let latest = this.latest
    for (const event of events) {
      if (event.recorded_at < latest) return true
      latest = event.recorded_at
    }
    return false
  }

  /** Takes note of appended events; true when they are the first to break the order. */
  observe(events: readonly StoredEvent[]): boolean {
    const wasAscending = this.ascending
    for (const event of events) {
      if (event.recorded_at < this.latest) this.ascending = false
      else this.latest = event.recorded_at
    }
    return wasAscending && !this.ascending
  }

  /** Events with recorded_at >= since among the indexes [0, end). */
  countSince(since: string, end: number, source: RecentSource): number {
    if (!this.ascending) return source.countScanning(since)
    // Smallest index whose row is recent; `end` when none is.
    let low = 0
    let high = end
    while (low < high) {
      const middle = Math.floor((low + high) / 2)
      const row = source.firstFrom(middle)
      if (row === undefined) high = middle
      else if (row[1] >= since) high = middle
      else low = row[0] + 1
    }
    return low >= end ? 0 : source.countFrom(low)
  }
}
