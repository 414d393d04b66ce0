/**
 * The sequence of an erasure (docs/erasure.md), the same in both stores: the intent made durable as
 * pending before its event is recorded, the event recorded, the covered events rewritten batch by
 * batch (eraseMembers), then the pending intent forgotten. An intent still pending when a store opens
 * or an erasure begins was cut short by a crash: it is completed when its event was recorded, and
 * dropped when not. Each driver supplies its rows: the pending intents, the covered events and the
 * read and write of one batch.
 */
import {eraseMembers, type ErasureIntent} from '../core/erasure/index.js'
import type {StoredEvent} from '../core/types.js'
import type {ErasurePlan, ErasureTaken} from './store.js'

/** An intent kept from before its event is recorded until it is applied. */
export interface PendingErasure {
  intent: ErasureIntent
}

/** One covered event of a batch, as stored and as the erasure leaves it. */
export interface ErasedEvent {
  before: StoredEvent
  after: StoredEvent
}

/** A store's side of the sequence. */
export interface ErasureDriver<P extends PendingErasure> {
  /** Events rewritten per batch (each batch one transaction). */
  readonly batchSize: number
  /** Runs `work` with no other erasure of the log under way. */
  exclusive<T>(work: () => Promise<T>): Promise<T>
  /** Makes the intent durable as pending. */
  addPending(intent: ErasureIntent): Promise<P>
  removePending(id: string): Promise<void>
  /** The pending intents, oldest first, with whether each one's event was recorded. */
  pendingErasures(): Promise<{pending: P; recorded: boolean}[]>
  /** Called before the first batch of an intent whose event is recorded. */
  begin?(pending: P): Promise<void>
  /** The events the intent covers that still hold a committed value of one of its members, index ascending. */
  erasableIndexes(intent: ErasureIntent): Promise<number[]>
  /**
   * One transaction: reads the events at `indexes`, hands them to `rewrite`, writes back the events
   * it changed.
   */
  rewriteBatch(
    intent: ErasureIntent,
    indexes: readonly number[],
    rewrite: (events: readonly StoredEvent[]) => ErasedEvent[],
  ): Promise<void>
  /** After the last batch: the pending intent forgotten, and the freed values overwritten. */
  finish(pending: P): Promise<void>
}

/** The members an intent takes from one event: its own list for listed events, else the intent's members. */
function erasedByIntent(event: StoredEvent, intent: ErasureIntent): StoredEvent {
  const wanted = intent.ids === undefined ? intent.members : (intent.ids[event.id] ?? [])
  return eraseMembers(event, wanted, intent.id)
}

const erasedCount = (event: StoredEvent): number => Object.keys(event.erased ?? {}).length

/** Applies an intent whose event is recorded, batch by batch: the events it erased from and the members taken. */
async function applyErasure<P extends PendingErasure>(
  driver: ErasureDriver<P>,
  pending: P,
): Promise<{events: number; members: number}> {
  const {intent} = pending
  await driver.begin?.(pending)
  const indexes = await driver.erasableIndexes(intent)
  let members = 0
  const rewrite = (events: readonly StoredEvent[]): ErasedEvent[] => {
    const changed: ErasedEvent[] = []
    for (const before of events) {
      const after = erasedByIntent(before, intent)
      if (after === before) continue
      members += erasedCount(after) - erasedCount(before)
      changed.push({before, after})
    }
    return changed
  }
  for (let at = 0; at < indexes.length; at += driver.batchSize) {
    await driver.rewriteBatch(intent, indexes.slice(at, at + driver.batchSize), rewrite)
  }
  await driver.finish(pending)
  return {events: indexes.length, members}
}

/** The erasures a crash cut short: completed when their event was recorded, else dropped. Run exclusively. */
export async function completePending<P extends PendingErasure>(driver: ErasureDriver<P>): Promise<void> {
  for (const {pending, recorded} of await driver.pendingErasures()) {
    if (recorded) await applyErasure(driver, pending)
    else await driver.removePending(pending.intent.id)
  }
}

/**
 * One erasure (EventStore.erase), exclusively: what is pending first, then the intent made durable,
 * its event recorded, and its batches applied; then what another process that died meanwhile left.
 */
export function runErasure<P extends PendingErasure>(
  driver: ErasureDriver<P>,
  plan: () => Promise<ErasurePlan | undefined>,
): Promise<ErasureTaken | undefined> {
  return driver.exclusive(async () => {
    await completePending(driver)
    const planned = await plan()
    if (planned === undefined) return undefined
    const pending = await driver.addPending(planned.intent)
    let erasure: StoredEvent
    try {
      erasure = await planned.record()
    } catch (error) {
      await driver.removePending(planned.intent.id)
      throw error
    }
    const taken = await applyErasure(driver, pending)
    await completePending(driver)
    return {erasure, ...taken}
  })
}
