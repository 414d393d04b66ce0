/**
 * The sql.js store's write path: every change is a journal record written and fsynced, then
 * applied to SQLite; a record that cannot be applied is taken back out of the journal. Writes
 * (and snapshot switches of the journal) run one at a time, in call order.
 */
import {AuditError} from '../../core/errors.js'
import type {StoredEvent} from '../../core/types.js'
import {TIMESTAMP_RESERVE_BYTES} from './capacity.js'
import type {Param} from './database.js'
import type {FileOps} from './file-ops.js'
import type {Footprint} from './footprint.js'
import {encodeRecord, Journal} from './journal.js'
import {SNAPSHOT_FILE} from './snapshot-file.js'
import type {Tables} from './tables.js'

/** What follows a journalled write. */
export interface WriteHooks {
  /** After events were inserted (none of it is needed for them to be stored). */
  afterInsert(rows: Param[][]): void
  /** After a record was journalled and applied: the snapshot thresholds count it. */
  journalled(events: number, bytes: number): void
}

export class JournalWriter {
  #journal!: Journal
  #queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly tables: Tables,
    private readonly footprint: Footprint,
    private readonly ops: FileOps,
    private readonly dataDir: string,
    private readonly hooks: WriteHooks,
  ) {}

  /** Starts appending to a fresh journal generation. */
  async start(generation: number): Promise<void> {
    this.#journal = await Journal.create(this.ops, this.dataDir, generation)
  }

  /** Runs journal writes and snapshot switches one at a time, in call order. */
  serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** Waits for the writes queued so far. */
  async settled(): Promise<void> {
    await this.#queue
  }

  /** Journals and inserts sequenced events; runs in serial. */
  async writeEvents(events: StoredEvent[], record: Buffer): Promise<void> {
    this.footprint.assertRoom(record.length)
    this.#assertConsistent()
    const {nextIndex} = this.tables
    events.forEach((event, i) => {
      if (event.index !== nextIndex + i) {
        throw new AuditError('internal_error', `event index ${event.index} given where ${nextIndex + i} is next`)
      }
    })
    const offset = await this.#appendRecord(record)
    let rows: Param[][]
    try {
      rows = this.tables.insertEvents(events)
    } catch (error) {
      // Not recorded after all: take the record out of the journal again.
      await this.#withdraw(offset)
      // The service gave the events the next sequences after the heads it recorded, and ids it
      // checked: a stored event already holding one was put there outside the service (in a
      // way the counts do not show, such as one event removed and another added).
      if (/UNIQUE constraint failed/.test((error as Error).message)) {
        throw new AuditError(
          'storage_unavailable',
          `nothing was recorded: ${SNAPSHOT_FILE} already holds an event with the agent and sequence (or the id) ` +
            `the service gave a new one, so events were added outside the service (audit-trail verify shows where)`,
          {cause: error},
        )
      }
      throw new AuditError('internal_error', 'the events could not be stored', {cause: error})
    }
    // Committed and journalled: from here on nothing may undo the journal record.
    this.hooks.afterInsert(rows)
    this.hooks.journalled(events.length, record.length)
  }

  /**
   * Journals one small record (a timestamp, checkpoint, cosignatures, erasure), then applies it, in
   * serial; a record that cannot be applied is withdrawn. It may use the reserve above the capacity:
   * signed history must not stop because events filled the store.
   */
  async appendSmall(line: Buffer, apply: () => void, what: string): Promise<void> {
    this.tables.assertOpen()
    await this.serial(async () => {
      this.footprint.assertRoom(line.length, TIMESTAMP_RESERVE_BYTES)
      const offset = await this.#appendRecord(line)
      try {
        apply()
      } catch (error) {
        await this.#withdraw(offset)
        throw new AuditError('internal_error', `${what} could not be stored`, {cause: error})
      }
      this.hooks.journalled(0, line.length)
    })
  }

  /**
   * Switches appends to the next journal generation once `capture` (given its number) succeeded;
   * runs in serial. Gives back the previous journal, for the caller to close.
   */
  async nextGeneration(capture: (generation: number) => void): Promise<{previous: Journal; generation: number}> {
    const next = await Journal.create(this.ops, this.dataDir, this.#journal.generation + 1)
    try {
      capture(next.generation)
    } catch (error) {
      await next.close()
      await this.ops.unlink(next.file)
      throw error
    }
    const previous = this.#journal
    this.#journal = next
    return {previous, generation: next.generation}
  }

  async close(): Promise<void> {
    await this.#journal.close().catch(() => undefined)
  }

  /**
   * Indexes run 0..n-1 as the Merkle leaves do, and the chains end at their recorded heads: a file
   * where either no longer holds (edited while the service was stopped) cannot take the next event
   * without lying about the ones before.
   */
  #assertConsistent(): void {
    const {rowCount, nextIndex, headsTotal} = this.tables
    if (rowCount !== nextIndex) {
      throw new AuditError(
        'storage_unavailable',
        `nothing was recorded: ${SNAPSHOT_FILE} holds ${rowCount} events under indexes up to ` +
          `${nextIndex - 1}, so events were removed or renumbered outside the service (audit-trail verify ` +
          `shows where)`,
      )
    }
    if (rowCount !== headsTotal) {
      throw new AuditError(
        'storage_unavailable',
        `nothing was recorded: ${SNAPSHOT_FILE} holds ${rowCount} events where the chain heads the service ` +
          `recorded account for ${headsTotal}, so events were added or removed outside the service ` +
          `(audit-trail verify shows where)`,
      )
    }
  }

  /** Appends a journal record; a failed append that could not be cut off is withdrawn by a cut. */
  async #appendRecord(record: Uint8Array): Promise<number> {
    const offset = this.#journal.size
    try {
      return await this.#journal.append(record)
    } catch (error) {
      if (this.#journal.dirty) await this.#cut(offset).catch(() => undefined)
      throw error
    }
  }

  /**
   * Takes a record the store refused back out of the journal: truncated, or, when that fails,
   * cut off by a new generation that says where the old one ends (journal.ts), so that replay
   * never applies it. When both fail the journal stays dirty and every append is refused until
   * the truncation succeeds (Journal.append tries it first).
   */
  async #withdraw(offset: number): Promise<void> {
    try {
      await this.#journal.truncate(offset)
    } catch {
      await this.#cut(offset).catch(() => undefined)
    }
  }

  async #cut(length: number): Promise<void> {
    const previous = this.#journal
    const next = await Journal.create(this.ops, this.dataDir, previous.generation + 1)
    try {
      await next.append(encodeRecord({cut: {generation: previous.generation, length}}))
    } catch (error) {
      await next.close().catch(() => undefined)
      await this.ops.unlink(next.file).catch(() => undefined)
      throw error
    }
    this.#journal = next
    await previous.close().catch(() => undefined)
  }
}
