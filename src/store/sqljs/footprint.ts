/**
 * The sql.js store's database size: measured after every insert for the enforced capacity
 * (capacity.ts), and what decides when sql.js's stale in-memory copies are collected (memory.ts).
 */
import type {StorageUsage} from '../../core/types.js'
import {storageFullError, usage, warningMessage} from './capacity.js'
import {collectGarbage} from './memory.js'
import type {Tables} from './tables.js'

/** Database size (pages of 4 KiB) from which old in-memory copies are collected at once. */
export const COLLECT_FROM_PAGES = 16_384
export const COLLECT_FROM_BYTES = COLLECT_FROM_PAGES * 4096

export class Footprint {
  /** The database's size (pages times page size), measured after every insert. */
  #usedBytes = 0
  #pageSize: number
  #warned = false
  /** Database pages at the last forced garbage collection. */
  #pagesAtCollection = 0

  constructor(
    private readonly tables: Tables,
    private readonly capacity: number,
    private readonly warn: (message: string) => void,
  ) {
    this.#pageSize = tables.number('PRAGMA page_size')
  }

  get usedBytes(): number {
    return this.#usedBytes
  }

  /** The database's size now (not the last measure). */
  bytes(): number {
    return this.#pages() * this.#pageSize
  }

  /** Measures the database and warns, once per run, when it passes the warning level. */
  measure(): void {
    this.#usedBytes = this.bytes()
    const state = usage(this.#usedBytes, this.capacity).state
    if (state !== 'ok' && !this.#warned) {
      this.#warned = true
      this.warn(warningMessage(this.#usedBytes, this.capacity))
    }
  }

  storage(): StorageUsage {
    return usage(this.#usedBytes, this.capacity)
  }

  /** Refuses, before anything is written, a record that would take the database past its capacity. */
  assertRoom(bytes: number, reserve = 0): void {
    if (this.#usedBytes + bytes > this.capacity + reserve) throw storageFullError(this.#usedBytes, this.capacity)
  }

  /**
   * sql.js reallocates its in-memory file each time the database grows by 12.5 %; collect the old
   * copy then, rather than whenever V8 gets to it.
   */
  collectAfterGrowth(): void {
    const pages = this.#pages()
    // Below 64 MiB (of 4 KiB pages) a stale copy does not matter, and collecting costs milliseconds.
    if (pages > COLLECT_FROM_PAGES && pages > this.#pagesAtCollection * 1.1) {
      collectGarbage()
      this.#pagesAtCollection = pages
    }
  }

  /**
   * Whether the database is large enough for its copies to matter. A full collection costs time
   * in proportion to the whole heap, not to the database: for a small store it buys nothing.
   */
  isLarge(): boolean {
    return this.#pages() > COLLECT_FROM_PAGES
  }

  #pages(): number {
    return this.tables.number('PRAGMA page_count')
  }
}
