/**
 * The in-memory event headers behind policy checks: always exactly what the store holds, however
 * the events arrived (before the cache existed, through the feed, while it was reading).
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import type {EventHeader} from '../../src/core/types.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {HeaderCache} from '../../src/services/header-cache.js'
import {makeEvent, servicesPerTest} from '../support/harness.js'

const plain = (h: EventHeader): EventHeader => ({
  id: h.id,
  agent_id: h.agent_id,
  action_type: h.action_type,
  action_name: h.action_name,
  action_status: h.action_status,
  timestamp: h.timestamp,
  labels: h.labels,
  sequence: h.sequence,
  index: h.index,
})

/** Records events first..first+count-1 in batches of 1,000 (the most one batch takes). */
async function record(services: AuditServices, first: number, count: number): Promise<void> {
  for (let i = first; i < first + count; i += 1000) {
    await services.ingest.recordBatch(Array.from({length: Math.min(1000, first + count - i)}, (_, k) => event(i + k)))
  }
}

async function collect(batches: AsyncIterable<readonly EventHeader[]>): Promise<EventHeader[]> {
  const out: EventHeader[] = []
  for await (const batch of batches) for (const header of batch) out.push(plain(header))
  return out
}

const event = (i: number) =>
  makeEvent({
    agent_id: `agent-${i % 3}`,
    action_type: i % 2 ? 'LLM_CALL' : 'TOOL_CALL',
    action_name: `step-${i % 5}`,
    action_status: i % 7 ? 'success' : 'error',
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    labels: i % 4 ? {env: i % 2 ? 'prod' : 'dev'} : {},
    // Some ids chosen by the client (v4, upper case: stored lower-cased), the rest generated (v7).
    ...(i % 10 === 3 ? {id: `0000${i.toString(16).padStart(4, '0')}-AAAA-4BBB-8CCC-DDDDEEEEFFFF`} : {}),
  })

describe('HeaderCache (the event headers a policy reads)', () => {
  const ctx = servicesPerTest()

  it('holds exactly what the store holds: events from before it existed, then events from the feed', async () => {
    await record(ctx.services, 0, 7000)
    const cache = new HeaderCache(ctx.services.store, ctx.services.feed)
    expect(await collect(cache.headers())).to.deep.equal(await collect(ctx.services.store.scanEventHeaders()))
    expect(cache.size).to.equal(7000)
    await ctx.services.ingest.recordBatch(Array.from({length: 30}, (_, i) => event(7000 + i)))
    expect(cache.size, 'appended from the feed').to.equal(7030)
    const all = await collect(cache.headers())
    expect(all).to.deep.equal(await collect(ctx.services.store.scanEventHeaders()))
    expect(all.filter((h) => h.id.endsWith('-aaaa-4bbb-8ccc-ddddeeeeffff'))).to.have.length(703)
    expect(await collect(cache.headers({agent_id: 'agent-1'}))).to.deep.equal(
      await collect(ctx.services.store.scanEventHeaders({filter: {agent_id: 'agent-1'}})),
    )
    expect(await collect(cache.headers({agent_id: 'nobody'}))).to.deep.equal([])
  })

  it('misses nothing and duplicates nothing when events are recorded while it reads the store', async () => {
    await record(ctx.services, 0, 12_000)
    const cache = new HeaderCache(ctx.services.store, ctx.services.feed)
    const reading = cache.catchUp()
    const writing = (async () => {
      for (let k = 0; k < 10; k++)
        await ctx.services.ingest.recordBatch(Array.from({length: 50}, (_, i) => event(12_000 + k * 50 + i)))
    })()
    await Promise.all([reading, writing])
    const headers = await collect(cache.headers())
    expect(headers.map((h) => h.index)).to.deep.equal(Array.from({length: 12_500}, (_, i) => i))
    expect(headers).to.deep.equal(await collect(ctx.services.store.scanEventHeaders()))
  })

  it('keeps values of a hand-edited file exactly, and reads the store when rows were deleted', async () => {
    await ctx.services.ingest.recordBatch(Array.from({length: 20}, (_, i) => event(i)))
    await ctx.services.close()
    for (const file of await readdir(ctx.dir)) if (file.startsWith('journal')) await rm(path.join(ctx.dir, file))
    execFileSync('sqlite3', [
      path.join(ctx.dir, 'events.sqlite'),
      `UPDATE events SET timestamp = 'yesterday', sequence = 'x' WHERE "index" = 4;
      UPDATE events SET timestamp = '2026-02-30T00:00:00.000Z' WHERE "index" = 5;
    UPDATE events SET id = 'ABC' WHERE "index" = 6;`,
    ])
    ctx.services = await openAudit({dataDir: ctx.dir})
    const cache = new HeaderCache(ctx.services.store, ctx.services.feed)
    const headers = await collect(cache.headers())
    expect(headers).to.deep.equal(await collect(ctx.services.store.scanEventHeaders()))
    expect(headers[4]!.timestamp).to.equal('yesterday')
    expect(headers[5]!.timestamp).to.equal('2026-02-30T00:00:00.000Z')
    expect(headers[6]!.id).to.equal('ABC')
    await ctx.services.close()
    execFileSync('sqlite3', [path.join(ctx.dir, 'events.sqlite'), 'DELETE FROM events WHERE "index" = 10'])
    ctx.services = await openAudit({dataDir: ctx.dir})
    const holed = new HeaderCache(ctx.services.store, ctx.services.feed)
    const read = await collect(holed.headers())
    expect(read.map((h) => h.index)).to.not.include(10)
    expect(read).to.deep.equal(await collect(ctx.services.store.scanEventHeaders()))
  })
})
