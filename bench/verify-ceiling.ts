/**
 * The one-thread ceiling of chain verification (issue 46): the stored events' content (without
 * `hash` and `index`) canonicalised by the `canonicalize` package and hashed with SHA-256, on this
 * thread, over the first events of the store under test. The verification rows give their rate
 * as a multiple of it, measured in the same run.
 */
import canonicalize from 'canonicalize'
import {sha256Hex} from '../src/core/crypto.js'
import type {StoredEvent} from '../src/core/types.js'
import type {EventStore} from '../src/store/store.js'
import {fmt} from './rows.js'

/** Events per second, the median of three rounds over the first `count` stored events. */
export async function oneThreadCeiling(store: EventStore, count = 20_000): Promise<number> {
  const contents: Array<Omit<StoredEvent, 'hash' | 'index'>> = []
  for await (const {hash: _hash, index: _index, ...content} of store.scanEvents({toIndex: count})) {
    contents.push(content)
  }
  const rounds: number[] = []
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now()
    for (const content of contents) sha256Hex(canonicalize(content)!)
    rounds.push(performance.now() - t0)
  }
  const median = rounds.sort((a, b) => a - b)[1]!
  return contents.length / (median / 1000)
}

/** A verification rate beside the ceiling, as the report's ceiling column shows it. */
export function besideCeiling(rate: number, ceiling: number): string {
  return `${fmt(rate / ceiling, 2)}x the one-thread ceiling (canonicalize + SHA-256: ${fmt(ceiling)} /s)`
}
