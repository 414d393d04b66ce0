/**
 * What `migrate` does to one trail's log, whichever trail (docs/postgres.md, "Moving a data
 * directory over"; docs/trails.md, Upgrading): refuse a target that holds any of a log, then copy
 * the events in index order exactly as stored, the timestamps, the checkpoints with their
 * cosignatures and the forwarding positions.
 */
import {AuditError} from '../core/errors.js'
import {MerkleTree} from '../core/merkle/index.js'
import {toHex} from '../core/hex.js'
import type {EventStore} from '../store/store.js'

/** Events per append while copying. */
const COPY_BATCH = 5000

export type Progress = (copied: number, total: number) => void

export async function rootOf(store: EventStore): Promise<string> {
  const tree = new MerkleTree()
  for (const hash of await store.eventHashes()) tree.appendHex(hash)
  return toHex(tree.root())
}

const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/** What `target` holds of a log, as phrases ("3 events"); empty when it holds nothing. */
export async function heldBy(target: EventStore): Promise<string[]> {
  return [
    counted(await target.count(), 'event'),
    counted((await target.listTimestamps()).length, 'timestamp'),
    counted((await target.listCheckpoints()).length, 'checkpoint'),
  ].filter((part) => !part.startsWith('0 '))
}

export function listed(parts: string[]): string {
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`
}

/** Refuses a database that holds any of a log already, in one sentence. */
export async function assertEmpty(target: EventStore): Promise<void> {
  const held = await heldBy(target)
  if (held.length === 0) return
  throw new AuditError(
    'validation_error',
    `the database already holds ${listed(held)}: migrate copies into an empty database only; create a new one ` +
      `(createdb) and give its URL with --database-url`,
  )
}

/** The events in batches of COPY_BATCH, with the progress after each. */
async function copyEvents(source: EventStore, target: EventStore, total: number, onProgress?: Progress) {
  let batch = []
  let copied = 0
  onProgress?.(0, total)
  for await (const event of source.scanEvents({toIndex: total})) {
    batch.push(event)
    if (batch.length === COPY_BATCH) {
      await target.appendEvents(batch)
      copied += batch.length
      onProgress?.(copied, total)
      batch = []
    }
  }
  if (batch.length > 0) await target.appendEvents(batch)
  onProgress?.(total, total)
}

/**
 * The forwarding positions go with the events (docs/forwarding.md), so that a `serve` on the
 * database goes on from where the data directory's stopped rather than sending everything again.
 */
async function copyForwardingPositions(source: EventStore, target: EventStore): Promise<void> {
  const holder = 'audit-trail migrate'
  for (const position of await source.forwarding.list()) {
    await target.forwarding.claim(position.destination, holder, 60_000)
    await target.forwarding.save(position, holder)
    await target.forwarding.release(position.destination, holder)
  }
}

/** Everything of `source`'s log into `target`; resolves to the number of events copied. */
export async function copyLog(source: EventStore, target: EventStore, onProgress?: Progress): Promise<number> {
  const total = await source.count()
  await copyEvents(source, target, total, onProgress)
  for (const record of await source.listTimestamps()) await target.appendTimestamp(record)
  for (const record of await source.listCheckpoints()) await target.appendCheckpoint(record)
  await copyForwardingPositions(source, target)
  return total
}
