/**
 * The write-ahead journal (docs/design.md): append-only files `journal-<generation>.ndjson`
 * of one JSON record per line, `{"events": [...]}` for one appendEvents call (so a call is all or
 * nothing on replay too), `{"timestamp": {...}}`, or `{"erasure": {...}}` (an erasure's intent,
 * written before its event: docs/erasure.md). A record counts once its line, newline
 * included, is written and fsynced.
 *
 * A failed write or fsync is undone by truncating the file back to its last good length (and
 * fsyncing that) before anything else is appended: a rejected record must never sit in front of a
 * later acknowledged one, or replay would prefer it. Until the truncation succeeds every append
 * is refused.
 *
 * A snapshot switches to the next generation at the moment of its export; `store_meta` in the
 * snapshot names the first generation it does not contain, so replay starts there.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import {AuditError} from '../../core/errors.js'
import type {CheckpointRecord, StoredEvent, TimestampRecord} from '../../core/types.js'
import {fsyncDirectory, writeFully, type FileOps} from './file-ops.js'
import type {PendingErasure} from '../erasure-sequence.js'

/** An erasure's intent with the erasure epoch the store is at once it is applied (erasure.ts). */
export interface JournalledErasure extends PendingErasure {
  epoch: number
}

/**
 * `cut` opens a new generation when a record that was refused could not be cut off its own file
 * (the truncation failed): replay reads that earlier generation only up to `length`.
 */
export type JournalRecord =
  | {events: StoredEvent[]}
  | {timestamp: TimestampRecord}
  | {cut: {generation: number; length: number}}
  | {checkpoint: CheckpointRecord}
  | {cosignatures: {tree_size: number; lines: string[]}}
  | {erasure: JournalledErasure}

export const JOURNAL_FILE = /^journal-(\d{6,})\.ndjson$/
/** Replay reads journals in pieces of this size (a journal may be larger than a Buffer can hold). */
const READ_CHUNK = 16 * 1024 * 1024

export function journalFile(dir: string, generation: number): string {
  return path.join(dir, `journal-${String(generation).padStart(6, '0')}.ndjson`)
}

/** The journal files of a directory, oldest generation first. */
export function listJournals(dir: string): {generation: number; file: string}[] {
  return fs
    .readdirSync(dir)
    .flatMap((name) => {
      const match = JOURNAL_FILE.exec(name)
      return match ? [{generation: Number(match[1]), file: path.join(dir, name)}] : []
    })
    .sort((a, b) => a.generation - b.generation)
}

export function encodeRecord(record: JournalRecord): Buffer {
  return Buffer.from(`${JSON.stringify(record)}\n`, 'utf8')
}

/** The members that make a record of its kind, besides events and cuts. */
const RECORD_KINDS = ['timestamp', 'checkpoint', 'cosignatures', 'erasure']

function parseRecord(line: Buffer): JournalRecord | undefined {
  try {
    const record = JSON.parse(line.toString('utf8')) as JournalRecord
    const fields = record as {events?: unknown; cut?: unknown}
    const valid =
      record !== null &&
      typeof record === 'object' &&
      (Array.isArray(fields.events) ||
        isCut(fields.cut) ||
        RECORD_KINDS.some((kind) => typeof (record as Record<string, unknown>)[kind] === 'object'))
    return valid ? record : undefined
  } catch {
    return undefined
  }
}

function isCut(cut: unknown): boolean {
  const {generation, length} = (cut ?? {}) as {generation?: unknown; length?: unknown}
  return Number.isSafeInteger(generation) && Number.isSafeInteger(length) && (length as number) >= 0
}

/** The cut a journal file opens with (its first record), if any. */
export function readCut(file: string): {generation: number; length: number} | undefined {
  const fd = fs.openSync(file, 'r')
  try {
    const head = Buffer.alloc(4096)
    const read = fs.readSync(fd, head, 0, head.length, 0)
    const newline = head.subarray(0, read).indexOf(10)
    if (newline === -1) return undefined
    const record = parseRecord(head.subarray(0, newline))
    return record !== undefined && 'cut' in record ? record.cut : undefined
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Calls `onRecord` for every complete record of a journal file and returns the length of its good
 * prefix. An incomplete or unreadable final line (a write torn by a crash) is ignored; an
 * unreadable line followed by more lines is corruption and throws. Records ending past `limit`
 * (a cut) are not read.
 */
export function readJournal(
  file: string,
  onRecord: (record: JournalRecord) => void,
  limit = Number.POSITIVE_INFINITY,
): number {
  const fd = fs.openSync(file, 'r')
  try {
    let pending: Buffer[] = []
    let pendingStart = 0
    let position = 0
    const chunk = Buffer.allocUnsafe(READ_CHUNK)
    for (;;) {
      const read = fs.readSync(fd, chunk, 0, READ_CHUNK, position)
      if (read === 0) return pendingStart
      let start = 0
      for (let newline = chunk.indexOf(10, 0); newline !== -1 && newline < read; newline = chunk.indexOf(10, start)) {
        pending.push(chunk.subarray(start, newline))
        const line = pending.length === 1 ? pending[0]! : Buffer.concat(pending)
        pending = []
        const record = parseRecord(line)
        const end = position + newline + 1
        // Past a cut: records refused after they were written (see JournalRecord).
        if (end > limit) return pendingStart
        if (!record) {
          if (end < fs.fstatSync(fd).size) throw new Error(`journal ${file} is corrupt at byte ${pendingStart}`)
          return pendingStart
        }
        onRecord(record)
        pendingStart = end
        start = newline + 1
      }
      if (start < read) pending.push(Buffer.from(chunk.subarray(start, read)))
      position += read
    }
  } finally {
    fs.closeSync(fd)
  }
}

function storageError(file: string, error: unknown): AuditError {
  return new AuditError('storage_unavailable', `the journal ${path.basename(file)} could not be written`, {
    cause: error,
  })
}

/** The journal file that appends go to. */
export class Journal {
  /** Bytes on disk may extend past `length` (a failed append not yet truncated). */
  #dirty = false

  private constructor(
    private readonly ops: FileOps,
    readonly file: string,
    readonly generation: number,
    private fd: number,
    private length: number,
  ) {}

  /** Creates the (new, empty) journal of a generation and makes its directory entry durable. */
  static async create(ops: FileOps, dir: string, generation: number): Promise<Journal> {
    const file = journalFile(dir, generation)
    let fd: number | undefined
    try {
      fd = await ops.open(file, 'wx')
      await fsyncDirectory(ops, dir)
    } catch (error) {
      // Leave no file behind: the next attempt creates this same generation.
      if (fd !== undefined) {
        await ops.close(fd).catch(() => undefined)
        await ops.unlink(file).catch(() => undefined)
      }
      throw storageError(file, error)
    }
    return new Journal(ops, file, generation, fd, 0)
  }

  get size(): number {
    return this.length
  }

  /** Whether bytes past `size` may still be on disk (a refused record whose truncation failed). */
  get dirty(): boolean {
    return this.#dirty
  }

  /** Appends one encoded record durably; returns the offset it starts at. */
  async append(record: Uint8Array): Promise<number> {
    const start = this.length
    try {
      if (this.#dirty) await this.truncate(start)
      this.#dirty = true
      await writeFully(this.ops, this.fd, record, start)
      await this.ops.fsync(this.fd)
      this.#dirty = false
    } catch (error) {
      await this.truncate(start).catch(() => undefined)
      throw storageError(this.file, error)
    }
    this.length = start + record.length
    return start
  }

  /**
   * Cuts the file back to `length` durably (undoes appends after it). Should that fail, the next
   * append tries again first, still to `length`.
   */
  async truncate(length: number): Promise<void> {
    this.length = length
    this.#dirty = true
    await this.ops.ftruncate(this.fd, length)
    await this.ops.fsync(this.fd)
    this.#dirty = false
  }

  async close(): Promise<void> {
    await this.ops.close(this.fd)
  }
}
