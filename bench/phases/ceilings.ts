import canonicalize from 'canonicalize'
import {sha256Hex} from '../../src/core/crypto.js'
import {computeEventHash} from '../../src/core/event/index.js'
import type {StoredEvent} from '../../src/core/types.js'
import {eventRow, searchSource} from '../../src/store/sqljs/schema.js'
import {INSERT_TEXT, SEARCH_SCHEMA, textRow} from '../../src/store/sqljs/search-text.js'
import {SqliteDatabase} from '../../src/store/sqljs/database.js'
import {storedEvents} from '../events.js'
import {commitmentHashRows} from '../erasure.js'
import {CEILING_SAMPLE, SHARDS, fmt, record, timed} from '../common.js'

/**
 * The one-thread ceiling of issue 46's ingest and verification rows: events/s of `canonicalize` and
 * SHA-256 over the events' hashed content.
 */
export function hashCeiling(sample: readonly StoredEvent[]): number {
  const [, ms] = timed(() => {
    for (const {hash: _h, index: _i, ...content} of sample) sha256Hex(canonicalize(content)!)
  })
  return sample.length / (ms / 1000)
}

export async function ceilings(): Promise<StoredEvent[]> {
  const sample = storedEvents(0, CEILING_SAMPLE, new Map(), SHARDS)
  const canonical = sample.map(({hash: _h, index: _i, ...content}) => canonicalize(content)!)
  const [, rawHashMs] = timed(() => {
    for (const text of canonical) sha256Hex(text)
  })
  const libraryPerSecond = hashCeiling(sample)
  const [, oursMs] = timed(() => {
    for (const {hash: _h, index: _i, ...content} of sample) computeEventHash(content)
  })
  const bytes = canonical.reduce((n, t) => n + Buffer.byteLength(t), 0) / canonical.length
  record({
    what: `ceiling: raw SHA-256 of canonical JSON (${fmt(bytes)} B/event)`,
    value: `${fmt(CEILING_SAMPLE / (rawHashMs / 1000))} /s`,
    target: '-',
  })
  record({
    what: 'event hash, `canonicalize` + SHA-256',
    value: `${fmt(libraryPerSecond)} /s`,
    target: '-',
  })
  record({
    what: 'event hash, specialised JCS + SHA-256 (ours)',
    value: `${fmt(CEILING_SAMPLE / (oursMs / 1000))} /s`,
    target: '-',
    ceiling: `${fmt(rawHashMs / oursMs, 2)} of raw SHA-256`,
  })

  // The search thread's part of an append, for comparison (the store's part is timed beside ingest).
  const search = await SqliteDatabase.open()
  search.exec(SEARCH_SCHEMA)
  const [, textMs] = timed(() => {
    for (let i = 0; i < sample.length; i += 1000) {
      const chunk = sample.slice(i, i + 1000)
      search.transaction(() =>
        search.prepare(INSERT_TEXT).runRows(chunk.map((e) => textRow(searchSource(eventRow(e))))),
      )
    }
  })
  search.close()
  record({
    what: 'raw sql.js FTS4 indexing of the same events (done by the search thread, off the ingest path)',
    value: `${fmt(CEILING_SAMPLE / (textMs / 1000))} /s`,
    target: '-',
  })
  for (const row of commitmentHashRows(sample)) record(row)
  return sample
}
