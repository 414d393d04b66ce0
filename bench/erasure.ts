/**
 * The rows of issue 30 (payload commitments and erasure, docs/erasure.md) for `npm run bench`:
 * hashing stored events in commitment form beside plain JCS + SHA-256 of the same events, batch
 * ingest with payloads beside the same events without, and the erasure of 100,000 events.
 */
import {rm} from 'node:fs/promises'
import path from 'node:path'
import {recomputeHash} from '../src/core/chain/index.js'
import {computeEventHash, PAYLOAD_MEMBERS} from '../src/core/event/index.js'
import type {StoredEvent} from '../src/core/types.js'
import {openAudit, type AuditServices} from '../src/services/audit.js'
import {syntheticEvent} from './events.js'
import {fmt, type BenchRow} from './rows.js'

/** The event as hash version 1 held it: payload inline, no salts or commitments. */
function plainForm(event: StoredEvent): StoredEvent {
  const {salts: _salts, commitments: _commitments, ...plain} = event
  return plain as StoredEvent
}

/**
 * Stored events in commitment form, each checked as verification checks it (its hash and every
 * commitment: recomputeHash), against plain JCS + SHA-256 of the same events with their payload
 * inline, alternating rounds of each so that both see the same machine; medians of three.
 */
export function commitmentHashRows(sample: StoredEvent[]): BenchRow[] {
  const plain = sample.map(plainForm)
  const plainMs: number[] = []
  const committedMs: number[] = []
  for (let round = 0; round < 3; round++) {
    let t0 = performance.now()
    for (const event of plain) computeEventHash(event)
    plainMs.push(performance.now() - t0)
    t0 = performance.now()
    for (const event of sample) recomputeHash(event)
    committedMs.push(performance.now() - t0)
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!
  const [plainTime, committedTime] = [median(plainMs), median(committedMs)]
  const members = sample.reduce((n, e) => n + PAYLOAD_MEMBERS.filter((m) => e[m] !== undefined).length, 0)
  return [
    {
      what: `plain JCS + SHA-256 of ${fmt(sample.length)} events, payload inline (hash version 1 form)`,
      value: `${fmt(sample.length / (plainTime / 1000))} /s`,
      target: '-',
    },
    {
      what: `the same events in commitment form: hash and ${fmt(members / sample.length, 1)} commitments each`,
      value: `${fmt(sample.length / (committedTime / 1000))} /s`,
      target: '<= 1.3x the time of plain',
      ceiling: `${fmt(committedTime / plainTime, 2)}x the time of plain`,
    },
  ]
}

/**
 * Batch ingest of `count` events with their payload and of the same events without one, into two
 * fresh data directories, a batch of 1,000 of each in turn.
 */
export async function payloadIngestRows(dir: string, count: number): Promise<BenchRow[]> {
  const withPayload = await openAudit({dataDir: path.join(dir, 'with-payload')})
  const without = await openAudit({dataDir: path.join(dir, 'without-payload')})
  const ms = {with: 0, without: 0}
  try {
    for (let i = 0; i < count; i += 1000) {
      const bodies = Array.from({length: Math.min(1000, count - i)}, (_, k) => syntheticEvent(i + k))
      const bare = bodies.map(({input: _input, output: _output, ...rest}) => rest)
      for (const [key, services, batch] of [
        ['with', withPayload, bodies],
        ['without', without, bare],
      ] as const) {
        const t0 = performance.now()
        if ((await services.ingest.recordBatch(batch)).status !== 201) throw new Error('ingest failed')
        ms[key] += performance.now() - t0
      }
    }
  } finally {
    await withPayload.close()
    await without.close()
    await rm(dir, {recursive: true, force: true})
  }
  return [
    {
      what: `batch ingest, durable, ${fmt(count)} events without payload (input, output left out)`,
      value: `${fmt(count / (ms.without / 1000))} /s`,
      target: '-',
    },
    {
      what: 'the same events with their payload (salts drawn, commitments computed), batches in turn',
      value: `${fmt(count / (ms.with / 1000))} /s`,
      target: '-',
      ceiling: `${fmt(ms.with / ms.without, 2)}x the time without`,
    },
  ]
}

/**
 * One erasure by filter (label shard 0: 100,000 events of the bulk ingest, all of them in the 100k
 * run) of every payload member, until the answer: files rewritten, journals gone, index saved.
 */
export async function erasureRows(services: AuditServices): Promise<BenchRow[]> {
  const size = await services.store.count()
  const t0 = performance.now()
  const result = await services.erasure.erase({filter: {labels: {shard: '0'}}, reason: 'benchmark'})
  const ms = performance.now() - t0
  if (!(await services.integrity.verifyAll()).valid) throw new Error('chains do not verify after the erasure')
  return [
    {
      what: `erasure of ${fmt(result.erased_events)} events' payload (a filter) in a log of ${fmt(size)}`,
      value: `${fmt(ms / 1000, 2)} s`,
      target: '< 10 s (100k of 1M, data directory)',
      ceiling: `${fmt(result.erased_members)} members`,
    },
  ]
}
