/**
 * Recovery on open (docs/design.md): the snapshot names the first journal generation it does
 * not contain; every journal from there on is replayed in order, a torn final line is ignored and
 * cut off, and journals older than that are leftovers of a snapshot that finished (deleted).
 */
import * as fs from 'node:fs'
import type {CheckpointRecord, StoredEvent, TimestampRecord} from '../../core/types.js'
import {listJournals, readCut, readJournal, type JournalledErasure, type JournalRecord} from './journal.js'

export interface ReplayTarget {
  /** The next global index the store expects. */
  nextIndex(): number
  insertEvents(events: StoredEvent[]): void
  insertTimestamp(record: TimestampRecord): void
  insertCheckpoint(record: CheckpointRecord): void
  addCosignatures(treeSize: number, lines: string[]): void
  /** An erasure's intent: pending until the store, once open, completes it (erasure.ts). */
  addErasure(pending: JournalledErasure): void
}

export interface ReplayResult {
  /** Events and timestamps applied from the journals. */
  records: number
  /** The highest generation found (firstGeneration - 1 when there is none). */
  lastGeneration: number
}

/** Events are applied in transactions of at least this many (one per record would be slow). */
const REPLAY_BATCH = 5000

/** Where each generation ends: a generation that opens with a cut ends the one it names at that length (journal.ts). */
function generationEnds(journals: {generation: number; file: string}[], firstGeneration: number): Map<number, number> {
  const ends = new Map<number, number>()
  for (const {generation, file} of journals) {
    const cut = generation >= firstGeneration ? readCut(file) : undefined
    if (cut) ends.set(cut.generation, Math.min(cut.length, ends.get(cut.generation) ?? Number.POSITIVE_INFINITY))
  }
  return ends
}

/** Applies a record other than events to the target; false for a record of events. */
function applyOther(record: JournalRecord, target: ReplayTarget): boolean {
  if ('timestamp' in record) target.insertTimestamp(record.timestamp)
  else if ('checkpoint' in record) target.insertCheckpoint(record.checkpoint)
  else if ('erasure' in record) target.addErasure(record.erasure)
  else if ('cosignatures' in record) target.addCosignatures(record.cosignatures.tree_size, record.cosignatures.lines)
  else return false
  return true
}

export function replayJournals(dir: string, firstGeneration: number, target: ReplayTarget): ReplayResult {
  let records = 0
  let lastGeneration = firstGeneration - 1
  let batch: StoredEvent[] = []
  const flush = () => {
    if (batch.length > 0) target.insertEvents(batch)
    batch = []
  }
  const journals = listJournals(dir)
  const ends = generationEnds(journals, firstGeneration)
  for (const {generation, file} of journals) {
    if (generation < firstGeneration) {
      fs.rmSync(file, {force: true})
      continue
    }
    lastGeneration = generation
    const good = readJournal(
      file,
      (record) => {
        if ('cut' in record) return
        records++
        if (!('events' in record)) {
          // Events before the record are applied before it, in journal order.
          flush()
          applyOther(record, target)
          return
        }
        for (const event of record.events) {
          const expected = target.nextIndex() + batch.length
          // Already in the snapshot (never after a clean switch, but harmless to skip).
          if (event.index < expected) continue
          if (event.index > expected) throw new Error(`journal ${file} skips from index ${expected} to ${event.index}`)
          batch.push(event)
        }
        if (batch.length >= REPLAY_BATCH) flush()
      },
      ends.get(generation),
    )
    flush()
    // Nothing to keep: remove the file rather than let empty journals pile up over restarts.
    if (good === 0) fs.rmSync(file, {force: true})
    else if (good < fs.statSync(file).size) fs.truncateSync(file, good)
  }
  return {records, lastGeneration}
}
