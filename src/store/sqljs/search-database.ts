/**
 * The search index of one data directory: an SQLite FTS4 database of its own, `search.sqlite`,
 * run by search-worker.ts on a thread of its own so that tokenising input, output and metadata
 * (about half of what an insert costs) is off the ingest path.
 *
 * The index records which event indexes it holds (`coverage`, ranges of indexes) and for which
 * store (`store_id`, kept in the store's own metadata). The store asks for the coverage once the
 * thread is up, passing its id and its event count: an index of another store, or one holding
 * events the store does not have (an older events.sqlite put back), is emptied right there, and
 * the store then feeds every event the index lacks. Rows already covered are skipped, so an event
 * fed twice (replayed from the journal after the index was saved) is indexed once.
 *
 * Erasures (docs/erasure.md) replace events' text by their erased text. The store counts its
 * erasures (its erasure epoch); the index records the count its text reflects, and an index of
 * another count (saved before an erasure the store completed, or during one) is emptied and fed
 * anew: it could still find an erased event by its old text. Deleted text is overwritten in the
 * file (secure_delete, and FTS4's `optimize` rewrites every segment without it).
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import {nodeFileOps} from './file-ops.js'
import {finishSnapshot, writeSnapshotData} from './snapshot-file.js'
import {SqliteDatabase} from './database.js'
import {collectGarbage} from './memory.js'
import {
  INSERT_ERASING,
  INSERT_TEXT,
  SEARCH_SCHEMA,
  SEARCH_TEXT_FORMAT,
  textRow,
  type SearchSource,
} from './search-text.js'

export const SEARCH_FILE = 'search.sqlite'
/** Freed pages and cells are zeroed: text an erasure deleted is not left in the file (sqlite.org/pragma.html). */
const SECURE_DELETE = 'PRAGMA secure_delete = ON;'
/** Index size from which a dropped copy is collected at once (as the store does for events.sqlite). */
const COLLECT_FROM_BYTES = 64 * 1024 * 1024

/** Sorted, disjoint, non-adjacent ranges [start, end) of event indexes. */
export class Coverage {
  constructor(readonly ranges: [number, number][] = []) {}

  has(index: number): boolean {
    const last = this.ranges[this.ranges.length - 1]
    if (last === undefined || index >= last[1]) return false
    return this.ranges.some(([start, end]) => index >= start && index < end)
  }

  add(index: number): void {
    const last = this.ranges[this.ranges.length - 1]
    if (last !== undefined && last[1] === index) {
      last[1] = index + 1
      return
    }
    if (this.has(index)) return
    this.ranges.push([index, index + 1])
    this.ranges.sort((a, b) => a[0] - b[0])
    const merged: [number, number][] = []
    for (const range of this.ranges) {
      const previous = merged[merged.length - 1]
      if (previous !== undefined && previous[1] >= range[0]) previous[1] = Math.max(previous[1], range[1])
      else merged.push([range[0], range[1]])
    }
    this.ranges.splice(0, this.ranges.length, ...merged)
  }

  /** The ranges of [0, end) not covered. */
  missing(end: number): [number, number][] {
    const gaps: [number, number][] = []
    let at = 0
    for (const [start, stop] of this.ranges) {
      if (start >= end) break
      if (start > at) gaps.push([at, start])
      at = Math.max(at, stop)
    }
    if (at < end) gaps.push([at, end])
    return gaps
  }

  /** The end of the last range (0 when empty). */
  get end(): number {
    return this.ranges[this.ranges.length - 1]?.[1] ?? 0
  }
}

/** The erasure epoch saved while an erasure is under way: no store has it, so the file is made anew. */
const ERASING_EPOCH = -1

export class SearchDatabase {
  /** Whether the erasure under way changes this index (false: its text already reflects it, or was emptied). */
  #applying = false
  #erasing = false

  private constructor(
    private db: SqliteDatabase,
    private coverage: Coverage,
    private storeId: string,
    private readonly dir: string,
    private epoch = 0,
  ) {}

  /** Opens the data directory's search.sqlite; a missing or unreadable file gives an empty index. */
  static async open(dir: string): Promise<SearchDatabase> {
    let bytes: Uint8Array | undefined
    try {
      bytes = fs.readFileSync(path.join(dir, SEARCH_FILE))
    } catch {
      bytes = undefined
    }
    if (bytes !== undefined) {
      try {
        const db = await SqliteDatabase.open(bytes)
        db.exec(SEARCH_SCHEMA + SECURE_DELETE)
        const meta = (key: string) => db.prepare('SELECT value FROM search_meta WHERE key = ?').texts([key])[0]
        // An index of an earlier text format (what search-text.ts feeds FTS) is made anew.
        if (meta('text_format') === SEARCH_TEXT_FORMAT) {
          const ranges = JSON.parse(meta('coverage') ?? '[]') as [number, number][]
          const epoch = Number(meta('erasure_epoch') ?? 0)
          return new SearchDatabase(db, new Coverage(ranges), meta('store_id') ?? '', dir, epoch)
        }
        db.close()
      } catch {
        // A damaged index is rebuilt from the events, which are the record.
      }
    }
    return new SearchDatabase(await SearchDatabase.#empty(), new Coverage(), '', dir)
  }

  static async #empty(): Promise<SqliteDatabase> {
    const db = await SqliteDatabase.open()
    db.exec(SEARCH_SCHEMA + SECURE_DELETE)
    return db
  }

  /** Empties the index, file included (it may hold erased text), for the store to feed anew. */
  async #reset(storeId: string, epoch: number): Promise<void> {
    this.db.close()
    this.db = await SearchDatabase.#empty()
    this.coverage = new Coverage()
    this.storeId = storeId
    this.epoch = epoch
    fs.rmSync(path.join(this.dir, SEARCH_FILE), {force: true})
  }

  /** Indexes the events not indexed yet. */
  add(sources: readonly SearchSource[]): void {
    const rows: ReturnType<typeof textRow>[] = []
    for (const source of sources) {
      if (this.coverage.has(source[0])) continue
      rows.push(textRow(source))
    }
    if (rows.length === 0) return
    this.db.transaction(() => this.db.prepare(INSERT_TEXT).runRows(rows))
    for (const row of rows) this.coverage.add(row[0] as number)
  }

  /**
   * The indexes of the store `storeId` of `end` events that the index lacks; first empties the
   * index when it belongs to another store or holds an index the store does not have.
   */
  async missing(storeId: string, end: number, epoch = 0): Promise<[number, number][]> {
    if (this.storeId !== storeId || this.coverage.end > end || this.epoch !== epoch) await this.#reset(storeId, epoch)
    return this.coverage.missing(end)
  }

  /**
   * An erasure of the store begins: its epoch goes from `from` to `to`. An index at `from` takes
   * the erasure's batches; one at `to` already reflects them (saved after them); any other is emptied.
   */
  async beginErasure(from: number, to: number): Promise<void> {
    this.#erasing = true
    this.#applying = this.epoch === from
    if (this.epoch !== from && this.epoch !== to) await this.#reset(this.storeId, to)
    this.epoch = to
  }

  /**
   * Replaces the text of erased events that the index holds: `before` must be exactly the text it
   * was fed (FTS4 deletes the tokens of the text it is given), `after` the same events erased.
   */
  eraseBatch(beforeJson: readonly string[], afterJson: readonly string[]): void {
    if (!this.#applying) return
    const before = beforeJson.map((row) => JSON.parse(row) as SearchSource)
    const after = afterJson.map((row) => JSON.parse(row) as SearchSource)
    const held = new Set(before.filter((source) => this.coverage.has(source[0])).map((source) => source[0]))
    if (held.size === 0) return
    this.db.transaction(() => {
      this.db.prepare(INSERT_ERASING).runRows(before.filter((s) => held.has(s[0])).map(textRow))
      this.db.exec('DELETE FROM events_fts WHERE docid IN (SELECT docid FROM erasing); DELETE FROM erasing')
      this.db.prepare(INSERT_TEXT).runRows(after.filter((s) => held.has(s[0])).map(textRow))
    })
  }

  /** The erasure is complete: every segment is merged into one, which holds no deleted token any more. */
  endErasure(): void {
    if (this.#applying) this.db.exec("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
    this.#erasing = false
    this.#applying = false
  }

  /** The total number of matching events and the indexes of one page of them, ascending. */
  search(match: string, limit: number, offset: number): {total: number; indexes: number[]} {
    const total = Number(this.db.prepare('SELECT count(*) FROM events_fts WHERE events_fts MATCH ?').texts([match])[0])
    const indexes = this.db
      .prepare('SELECT docid FROM events_fts WHERE events_fts MATCH ? ORDER BY docid LIMIT ? OFFSET ?')
      .texts([match, limit, offset])
      .map(Number)
    return {total, indexes}
  }

  /** Writes search.sqlite atomically, as the snapshot of events.sqlite is written. */
  async save(): Promise<void> {
    const meta = this.db.prepare('INSERT OR REPLACE INTO search_meta (key, value) VALUES (?, ?)')
    meta.runRows([
      ['store_id', this.storeId],
      ['coverage', JSON.stringify(this.coverage.ranges)],
      ['text_format', SEARCH_TEXT_FORMAT],
      ['erasure_epoch', String(this.#erasing ? ERASING_EPOCH : this.epoch)],
    ])
    let bytes: Uint8Array | undefined = this.db.export()
    const large = bytes.length >= COLLECT_FROM_BYTES
    try {
      const fd = await writeSnapshotData(nodeFileOps, this.dir, bytes, SEARCH_FILE)
      bytes = undefined
      await finishSnapshot(nodeFileOps, this.dir, fd, SEARCH_FILE)
    } finally {
      // eslint-disable-next-line no-useless-assignment -- drops the last reference for the collection below
      bytes = undefined
      // The export is a full copy of the index: freed now, not at this thread's next major GC.
      if (large) collectGarbage()
    }
  }

  close(): void {
    const pragma = (name: string) => Number(this.db.prepare(`PRAGMA ${name}`).texts()[0])
    const large = pragma('page_count') * pragma('page_size') >= COLLECT_FROM_BYTES
    this.db.close()
    if (large) collectGarbage()
  }
}
