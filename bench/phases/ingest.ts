import type {StoredEvent} from '../../src/core/types.js'
import type {AuditServices} from '../../src/services/audit.js'
import {INSERT_EVENT, INSERT_LABEL, SCHEMA, eventRow, labelRows} from '../../src/store/sqljs/schema.js'
import {SqliteDatabase} from '../../src/store/sqljs/database.js'
import {syntheticEvent} from '../events.js'
import {EVENTS, CEILING_SAMPLE, SHARDS, fmt, record, timed, timedAsync} from '../common.js'

/**
 * Bulk ingest through the service, 1,000 events a batch. For the first CEILING_SAMPLE events each
 * batch is paired with the ceiling: the same 1,000 events (the same sequences and hashes, ids of
 * the same kind: UUIDv7) inserted straight into an sql.js database of the same schema just before
 * it. Taken in alternation, both see the same machine, whose speed drifts by 2x within minutes.
 */
export async function ingest(services: AuditServices, sample: StoredEvent[]): Promise<void> {
  const raw = await SqliteDatabase.open()
  raw.exec(SCHEMA)
  let sampleMs = 0
  let rawMs = 0
  const [, totalMs] = await timedAsync(async () => {
    for (let i = 0; i < EVENTS; i += 1000) {
      if (i < CEILING_SAMPLE) {
        const chunk = sample.slice(i, i + 1000)
        rawMs += timed(() =>
          raw.transaction(() => {
            raw.prepare(INSERT_EVENT).runRows(chunk.map(eventRow))
            const labels: ReturnType<typeof eventRow>[] = []
            for (const e of chunk) labelRows(e, labels)
            raw.prepare(INSERT_LABEL).runRows(labels)
          }),
        )[1]
      }
      const t0 = performance.now()
      const batch = []
      for (let j = i; j < Math.min(EVENTS, i + 1000); j++) batch.push(syntheticEvent(j, SHARDS))
      const {status} = await services.ingest.recordBatch(batch)
      if (status !== 201) throw new Error('ingest failed')
      if (i < CEILING_SAMPLE) sampleMs += performance.now() - t0
    }
  })
  raw.close()
  const rawInsertPerSec = CEILING_SAMPLE / (rawMs / 1000)
  const samplePerSec = CEILING_SAMPLE / (sampleMs / 1000)
  record({
    what: 'ceiling: raw sql.js insert, same schema and events, no journal (row, indexes, labels), batches of 1,000',
    value: `${fmt(rawInsertPerSec)} /s`,
    target: '-',
  })
  record({
    what:
      `batch ingest, durable (validate+hash+journal+fsync+sql.js), first ${fmt(CEILING_SAMPLE)}, each batch right ` +
      `after its ceiling batch`,
    value: `${fmt(samplePerSec)} /s`,
    target: '>= 60,000 /s, >= 0.7 of raw',
    ceiling: `${fmt(samplePerSec / rawInsertPerSec, 2)} of raw sql.js insert`,
  })
  record({
    what: `batch ingest, durable, all ${fmt(EVENTS)}`,
    value: `${fmt(EVENTS / (totalMs / 1000))} /s`,
    target: '>= 60,000 /s',
  })
}
