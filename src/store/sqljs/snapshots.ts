/**
 * When and how the sql.js store writes `events.sqlite`: in the background once enough was journalled
 * since the last snapshot (or on a timer), and on demand. Snapshots run one after the other.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import type {FileOps} from './file-ops.js'
import type {Footprint} from './footprint.js'
import {listJournals} from './journal.js'
import {collectGarbage} from './memory.js'
import type {SearchIndex} from './search-index.js'
import {finishSnapshot, SNAPSHOT_FILE, writeSnapshotData} from './snapshot-file.js'
import type {Tables} from './tables.js'
import type {JournalWriter} from './writes.js'

/** A snapshot is due once the journal since the last one passes this fraction of the database. */
const SNAPSHOT_FRACTION = 0.25
/** After a failed background snapshot, wait this long before trying again. */
const SNAPSHOT_RETRY_MS = 60_000

export interface SnapshotThresholds {
  everyEvents: number
  everyBytes: number
  intervalMs: number
}

export class Snapshots {
  #since = {events: 0, bytes: 0, changed: false}
  /** Snapshots run one after the other (they share the temporary file). */
  #chain: Promise<unknown> = Promise.resolve()
  #backgroundPending = false
  #retryAt = 0
  #timer: NodeJS.Timeout | undefined

  constructor(
    private readonly tables: Tables,
    private readonly footprint: Footprint,
    private readonly writes: JournalWriter,
    private readonly search: SearchIndex,
    private readonly ops: FileOps,
    private readonly dataDir: string,
    private readonly thresholds: SnapshotThresholds,
  ) {}

  /** Marks the database as changed since the last snapshot, without counting a journal record. */
  changed(): void {
    this.#since.changed = true
  }

  /** Snapshots now in the background if anything changed, then every intervalMs while anything did. */
  start(changed: boolean): void {
    this.#since.changed = changed
    if (changed) this.inBackground()
    if (this.thresholds.intervalMs > 0) {
      this.#timer = setInterval(() => this.#since.changed && this.inBackground(), this.thresholds.intervalMs)
      this.#timer.unref()
    }
  }

  stop(): void {
    clearInterval(this.#timer)
  }

  /** Counts a journalled record, and snapshots in the background once enough was. */
  journalled(events: number, bytes: number): void {
    this.#since.events += events
    this.#since.bytes += bytes
    this.#since.changed = true
    // Thresholds grow with the database, so that the snapshots of an N-event ingest (each a full
    // copy) add up to a constant times N rather than N squared; replay stays a fraction of the log.
    const due =
      this.#since.events >= Math.max(this.thresholds.everyEvents, SNAPSHOT_FRACTION * this.tables.rowCount) ||
      this.#since.bytes >= Math.max(this.thresholds.everyBytes, SNAPSHOT_FRACTION * this.footprint.usedBytes)
    if (due && Date.now() >= this.#retryAt) this.inBackground()
  }

  /** Queues a snapshot, written when anything changed since the last one or none exists yet. */
  inTurn(): Promise<void> {
    const needed = () => this.#since.changed || !fs.existsSync(path.join(this.dataDir, SNAPSHOT_FILE))
    const run = this.#chain.then(() => (needed() ? this.#write() : undefined))
    this.#chain = run.catch(() => undefined)
    return run
  }

  inBackground(): void {
    if (this.#backgroundPending || this.tables.closed) return
    this.#backgroundPending = true
    this.inTurn()
      .catch(() => {
        // The journal still holds everything; try again later rather than on every append.
        this.#retryAt = Date.now() + SNAPSHOT_RETRY_MS
      })
      .finally(() => {
        this.#backgroundPending = false
      })
  }

  /**
   * Exports the database and, at that same moment, switches appends to a new journal generation,
   * so the snapshot holds exactly the generations before it. Older journals are deleted only once
   * the snapshot file is durable.
   *
   * Appends wait until the export's bytes are handed to the OS: the export is a full copy of the
   * database, and letting appends grow SQLite's in-memory file (which reallocates it) while that
   * copy is alive would briefly hold three copies. The fsyncs and the rename run without blocking.
   */
  async #write(): Promise<void> {
    const {fd, previous, generation} = await this.writes.serial(async () => {
      let bytes: Uint8Array | undefined
      const large = this.footprint.isLarge()
      const switched = await this.writes.nextGeneration((generation) => {
        this.tables.setMeta('journal_generation', String(generation))
        if (large) collectGarbage()
        bytes = this.tables.db.export()
      })
      this.#since = {events: 0, bytes: 0, changed: false}
      try {
        const fd = await writeSnapshotData(this.ops, this.dataDir, bytes!)
        return {fd, ...switched}
      } catch (error) {
        this.#since.changed = true
        throw error
      } finally {
        // Drops the last reference to the export so that the collection below can free it.
        // eslint-disable-next-line no-useless-assignment
        bytes = undefined
        if (large) collectGarbage()
      }
    })
    await previous.close().catch(() => undefined)
    // The search index is saved by its thread, as of this moment (a cache: failures are ignored).
    void this.search.save()
    try {
      await finishSnapshot(this.ops, this.dataDir, fd)
    } catch (error) {
      this.#since.changed = true
      throw error
    }
    for (const journal of listJournals(this.dataDir)) {
      if (journal.generation < generation) await this.ops.unlink(journal.file).catch(() => undefined)
    }
  }
}
