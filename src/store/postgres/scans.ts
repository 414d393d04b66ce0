/**
 * The reads of long stretches of the log in index order, a batch per query (never the whole table
 * in memory): events, their headers, events with their hashes recomputed, and the `hash` column.
 */
import type {EventHeader, StoredEvent} from '../../core/types.js'
import {headerOf, toEvent, toHeader} from '../event-row.js'
import {isEmptyFilter} from '../filters.js'
import {hashedBatches, THREAD_FROM_EVENTS, type HashedBatch} from '../hashed-scan.js'
import type {ScanOptions} from '../store.js'
import type {Query} from './database.js'
import {count, countWhere} from './queries.js'
import {rangeHashedBatches} from './range-scan.js'
import {EVENT_JSON, HEADER_JSON} from './schema.js'
import {whereOf} from './where.js'

const SCAN_BATCH = 5000
/** Hashes read per query: a million are 16 queries. */
const HASH_CHUNK = 65_536
/**
 * Scans hash on two threads and leave this one to take rows off the socket: the server builds the
 * next batch meanwhile instead of waiting for it to be read.
 */
const POSTGRES_HASHING = {threads: 2, callerHashes: false}

/** A row of a scan: the text of its `columns` and its index. */
export type ScannedRow = {row: string; index: string}

/**
 * Rows in index order, SCAN_BATCH (or options.batchSize, when smaller) per query, keyed on the last
 * index read; `columns` is the SQL of the row's text (EVENT_JSON, HEADER_JSON).
 */
export async function* scanRows(query: Query, columns: string, options: ScanOptions): AsyncIterable<ScannedRow[]> {
  const limit = Math.max(1, Math.min(options.batchSize ?? SCAN_BATCH, SCAN_BATCH))
  // Without a filter, each query also ends `limit` indexes on (indexes are dense): that bounds the
  // rows it touches whatever plan the server picks, whose estimates for the newest rows lag behind.
  const windowed = options.toIndex !== undefined && isEmptyFilter(options.filter ?? {})
  type Batch = {rows: ScannedRow[]; end: number | undefined}
  const read = async (from: number | undefined): Promise<Batch> => {
    const end = windowed ? Math.min((from ?? 0) + limit, options.toIndex!) : options.toIndex
    const where = whereOf(options.filter, {fromIndex: from, toIndex: end})
    const rows = await query<ScannedRow>(
      `SELECT ${columns} AS row, "index" FROM events ${where.sql} ORDER BY "index" LIMIT ${limit}`,
      where.params,
    )
    return {rows, end}
  }
  let next: Promise<Batch> | undefined = read(options.fromIndex)
  try {
    while (next !== undefined) {
      const {rows, end}: Batch = await next
      const after: number | undefined =
        rows.length === limit ? Number(rows[rows.length - 1]!.index) + 1 : windowed ? end : undefined
      // The server reads the next batch while the caller works on this one.
      next = after !== undefined && (!windowed || after < options.toIndex!) ? read(after) : undefined
      if (rows.length > 0) yield rows
    }
  } finally {
    // A caller that stops early leaves a read in flight: its outcome is of no use to anyone.
    next?.catch(() => undefined)
  }
}

/** The texts of scanRows' rows. */
async function* scanTexts(query: Query, columns: string, options: ScanOptions): AsyncIterable<string[]> {
  for await (const rows of scanRows(query, columns, options)) yield rows.map((r) => r.row)
}

export async function* scanEvents(query: Query, options: ScanOptions): AsyncIterable<StoredEvent> {
  for await (const rows of scanTexts(query, EVENT_JSON, options)) yield* rows.map(toEvent)
}

export async function* scanEventHeaders(query: Query, options: ScanOptions): AsyncIterable<EventHeader[]> {
  for await (const rows of scanTexts(query, HEADER_JSON, options)) yield rows.map(toHeaderOrEvent)
}

/** A HEADER_JSON: the header's columns, or `E` and the row of an event kept in `verbatim`. */
function toHeaderOrEvent(row: string): EventHeader {
  if (!row.startsWith('E')) return toHeader(row)
  return headerOf(toEvent(row.slice(1)))
}

export function scanHashedEvents(query: Query, databaseUrl: string, options: ScanOptions): AsyncIterable<HashedBatch> {
  // A large stretch of the log, split by index range over the cores (range-scan.ts).
  const span = options.toIndex === undefined ? 0 : options.toIndex - (options.fromIndex ?? 0)
  if (isEmptyFilter(options.filter ?? {}) && span >= THREAD_FROM_EVENTS)
    return rangeHashedBatches(databaseUrl, options.fromIndex, options.toIndex!)
  const counted = countWhere(query, whereOf(options.filter, {fromIndex: options.fromIndex, toIndex: options.toIndex}))
  const scan = scanTexts(query, EVENT_JSON, options)
  return {
    async *[Symbol.asyncIterator]() {
      yield* hashedBatches(scan, await counted, undefined, POSTGRES_HASHING, options.signatureKeys)
    },
  }
}

/** The first index of each HASH_CHUNK of [from, end). */
function* hashChunkStarts(from: number, end: number): Iterable<number> {
  for (let start = from; start < end; start += HASH_CHUNK) yield start
}

/** The `hash` column of the events of [from, end), HASH_CHUNK of them per query, with each chunk's first index. */
export async function* hashesBetween(
  query: Query,
  from: number,
  end: number,
): AsyncIterable<{from: number; hashes: string[]}> {
  for (const start of hashChunkStarts(from, end)) {
    const rows = await query<{hash: string}>(
      'SELECT hash FROM events WHERE "index" >= $1 AND "index" < $2 ORDER BY "index"',
      [start, Math.min(start + HASH_CHUNK, end)],
    )
    yield {from: start, hashes: rows.map((row) => row.hash)}
  }
}

export async function eventHashes(query: Query, fromIndex = 0, toIndex?: number): Promise<string[]> {
  const hashes: string[] = []
  const end = toIndex ?? (await count(query))
  for await (const chunk of hashesBetween(query, fromIndex, end)) for (const hash of chunk.hashes) hashes.push(hash)
  return hashes
}

/** EventStore.eventHashChunks: joined by the server, a chunk's hex is empty when a hash is not 64 characters. */
export async function* eventHashChunks(query: Query): AsyncIterable<{count: number; hex: string}> {
  const end = await count(query)
  for (const start of hashChunkStarts(0, end)) {
    const [row] = await query<{n: string; hex: string | null; ok: boolean}>(
      `SELECT count(*) AS n, string_agg(hash, '' ORDER BY "index") AS hex,
       coalesce(bool_and(length(hash) = 64), true) AS ok
       FROM events WHERE "index" >= $1 AND "index" < $2`,
      [start, Math.min(start + HASH_CHUNK, end)],
    )
    const n = Number(row!.n)
    if (n > 0) yield {count: n, hex: row!.ok ? (row!.hex ?? '') : ''}
  }
}
