/**
 * Publishes the log's events to the feed in index order, each once, whoever recorded them: this
 * process (IngestService hands them over) or another process on the same database (the store
 * signals a new size, LISTEN/NOTIFY on PostgreSQL; the events are then read from the store).
 * `published` is the size up to which every event was handed to the feed, and it moves in the same
 * step as the feed: a stream subscriber that reads it while attaching to the feed sees every event
 * below it in the store and every event at or above it on the feed.
 */
import type {MerkleTree} from '../core/merkle/index.js'
import type {StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {Feed} from './feed.js'
import {appendAt, catchUpTree} from './tree-sync.js'

/** Events per feed message when publishing what another process recorded. */
const PUBLISH_BATCH = 1000

export class LogFollower {
  #published: number
  #turn: Promise<void> = Promise.resolve()

  /**
   * `tree`: the in-memory tree to keep up with the log (none when the store keeps the tree);
   * `published`: the log's size at start, from where the feed carries events.
   */
  constructor(
    private readonly options: {
      store: EventStore
      tree?: MerkleTree
      published: number
      feed: Feed
      onError: (error: unknown) => void
    },
  ) {
    this.#published = options.published
  }

  get published(): number {
    return this.#published
  }

  /** Resolves when the work queued before the call is done (it never rejects: errors go to onError). */
  settled(): Promise<void> {
    return this.#turn
  }

  /** Events this process recorded, in index order (the tree already holds them). */
  recorded(events: StoredEvent[]): void {
    if (events.length === 0) return
    // Next in line and nothing being read: published now, in this very step.
    if (events[0]!.index === this.#published && this.#idle) {
      this.#publish(events)
      return
    }
    this.#inTurn(async () => {
      const first = events[0]!.index
      if (first > this.#published) await this.#readUpTo(first)
      const fresh = events.filter((event) => event.index >= this.#published)
      if (fresh.length > 0) this.#publish(fresh)
    })
  }

  /** The store has (at least) `size` events, or an unknown number when `size` is undefined. */
  grown(size?: number): void {
    this.#inTurn(async () => this.#readUpTo(size ?? (await this.options.store.count())))
  }

  #idle = true

  #inTurn(task: () => Promise<void>): void {
    this.#idle = false
    const run = this.#turn.then(task).catch(this.options.onError)
    this.#turn = run.finally(() => {
      if (this.#turn === tail) this.#idle = true
    })
    const tail = this.#turn
  }

  async #readUpTo(size: number): Promise<void> {
    if (size <= this.#published) return
    if (this.options.tree) await catchUpTree(this.options.tree, this.options.store, size)
    let batch: StoredEvent[] = []
    for await (const event of this.options.store.scanEvents({fromIndex: this.#published, toIndex: size})) {
      batch.push(event)
      if (batch.length >= PUBLISH_BATCH) {
        this.#publish(batch)
        batch = []
      }
    }
    if (batch.length > 0) this.#publish(batch)
  }

  #publish(events: StoredEvent[]): void {
    if (this.options.tree)
      appendAt(
        this.options.tree,
        events[0]!.index,
        events.map((event) => event.hash),
      )
    this.#published = events[events.length - 1]!.index + 1
    this.options.feed.emit('events', events)
  }
}
