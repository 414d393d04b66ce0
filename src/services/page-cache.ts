/**
 * Full pages of GET /v1/events, kept in memory with their JSON text.
 *
 * The log is append-only and ordered by index: a new event always has a higher index than every
 * stored one, and nothing in a running service changes or removes a stored event. So once a page
 * (filter, offset, limit) is full, the events on it are the same for every later request, whatever
 * is appended; only the total changes, and that is read afresh each time. A page that is not full
 * (the tail of a filter's events) can still grow and is never kept. This is the same reasoning
 * that lets transparency logs serve full tiles as immutable.
 *
 * An erasure (docs/erasure.md) is the one change to stored events: it empties the cache, and a page
 * read before it is not kept (its generation is older).
 */
import type {StoredEvent} from '../core/types.js'

export interface CachedPage {
  events: StoredEvent[]
  /** JSON.stringify(events) as UTF-8, made on first use: sent as it is, with no encoding or length scan per request. */
  body?: Buffer
}

/** Pages kept (least recently used first out) and events kept over all pages. */
const MAX_PAGES = 1000
const MAX_EVENTS = 20_000

export class PageCache {
  readonly #pages = new Map<string, CachedPage>()
  #events = 0
  #generation = 0

  /** Changes with every clear: pass it to offer as read before the page was read. */
  get generation(): number {
    return this.#generation
  }

  /** Forgets every page (stored events changed). */
  clear(): void {
    this.#pages.clear()
    this.#events = 0
    this.#generation++
  }

  get(key: string): CachedPage | undefined {
    const page = this.#pages.get(key)
    if (page !== undefined) {
      // Most recently used last.
      this.#pages.delete(key)
      this.#pages.set(key, page)
    }
    return page
  }

  /** Keeps a page that is full (as many events as the limit) and read since the last clear, else does nothing. */
  offer(key: string, limit: number, events: StoredEvent[], generation = this.#generation): CachedPage {
    const page: CachedPage = {events}
    if (events.length === 0 || events.length < limit || events.length > MAX_EVENTS) return page
    if (generation !== this.#generation) return page
    this.#pages.delete(key)
    this.#pages.set(key, page)
    this.#events += events.length
    for (const [oldest, old] of this.#pages) {
      if (this.#pages.size <= MAX_PAGES && this.#events <= MAX_EVENTS) break
      this.#pages.delete(oldest)
      this.#events -= old.events.length
    }
    return page
  }
}
