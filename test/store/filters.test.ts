import {expect} from 'chai'
import fc from 'fast-check'
import type {EventFilter, StoredEvent} from '../../src/core/types.js'
import {whereClause} from '../../src/store/sqljs/where.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {EventMaker, removeDir, tempDir} from './support.js'

/** The filters of GET /v1/events written the obvious way, to cross-check the SQL. */
function referenceFilter(events: StoredEvent[], filter: EventFilter): StoredEvent[] {
  return events.filter(
    (e) =>
      (filter.agent_id === undefined || e.agent_id === filter.agent_id) &&
      (filter.action_type === undefined || e.action_type === filter.action_type) &&
      (filter.since === undefined || Date.parse(e.timestamp) >= Date.parse(filter.since)) &&
      (filter.until === undefined || Date.parse(e.timestamp) < Date.parse(filter.until)) &&
      Object.entries(filter.labels ?? {}).every(([k, v]) => e.labels[k] === v),
  )
}

const time = (second: number) => new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString()

describe('store queries: filters, paging and totals', () => {
  let dir: string
  let store: SqlJsStore
  const maker = new EventMaker()
  const events = maker.many(300, (i) => ({
    agent_id: `agent-${i % 4}`,
    action_type: ['TOOL_CALL', 'LLM_CALL', 'DECISION'][i % 3]!,
    // Not monotonic in index, so time filters cannot lean on index order.
    timestamp: time((i * 7919) % 300),
    labels: {
      ...(i % 2 === 0 ? {env: 'prod'} : {env: 'dev'}),
      ...(i % 5 === 0 ? {team: 'a'} : {}),
      ...(i % 7 === 0 ? {team: 'b', tier: 'gold'} : {}),
    },
  }))

  before(async () => {
    dir = tempDir()
    store = await openSqlJsStore({dataDir: dir})
    for (let i = 0; i < events.length; i += 50) await store.appendEvents(events.slice(i, i + 50))
  })

  after(async () => {
    await store.close()
    removeDir(dir)
  })

  it('builds no WHERE for an empty filter and one condition per filter otherwise', () => {
    expect(whereClause({})).to.deep.equal({sql: '', params: []})
    const where = whereClause({agent_id: 'a', labels: {k: 'v', j: 'w'}}, {fromIndex: 3})
    // The index range also bounds each label subquery, so that a scan's later batches seek there.
    expect(where.params).to.deep.equal(['a', 'k', 'v', 3, 'j', 'w', 3, 3])
    const label =
      '"index" IN (SELECT event_index FROM label_index WHERE pair = (SELECT id FROM label_pairs WHERE key = ? AND ' +
      'value = ?) AND event_index >= ?)'
    expect(where.sql).to.equal(`WHERE "agent_id" = ? AND ${label} AND ${label} AND "index" >= ?`)
    const bounded = whereClause({labels: {k: 'v'}}, {fromIndex: 3, toIndex: 9})
    expect(bounded.params).to.deep.equal(['k', 'v', 3, 9, 3, 9])
    expect(whereClause({labels: {k: 'v'}}).sql).to.equal(
      'WHERE "index" IN (SELECT event_index FROM label_index WHERE pair = (SELECT id FROM label_pairs WHERE key = ' +
        '? AND value = ?))',
    )
  })

  it('agrees with the reference for random filters and pages (property)', async () => {
    const filter = fc.record(
      {
        agent_id: fc.constantFrom('agent-0', 'agent-3', 'nobody'),
        action_type: fc.constantFrom('TOOL_CALL', 'DECISION'),
        since: fc.integer({min: 0, max: 300}).map(time),
        until: fc.integer({min: 0, max: 300}).map(time),
        labels: fc.dictionary(
          fc.constantFrom('env', 'team', 'tier'),
          fc.constantFrom('prod', 'dev', 'a', 'b', 'gold'),
          {maxKeys: 3},
        ),
      },
      {requiredKeys: []},
    )
    await fc.assert(
      fc.asyncProperty(
        filter,
        fc.integer({min: 1, max: 40}),
        fc.integer({min: 0, max: 120}),
        async (f, limit, offset) => {
          const expected = referenceFilter(events, f)
          const page = await store.queryEvents(f, {limit, offset})
          expect(page.total).to.equal(expected.length)
          expect(page.items).to.deep.equal(expected.slice(offset, offset + limit))
        },
      ),
      {numRuns: 120},
    )
  })

  it('combines several label filters with AND', async () => {
    const page = await store.queryEvents({labels: {team: 'b', env: 'prod', tier: 'gold'}}, {limit: 100, offset: 0})
    expect(page.items.map((e) => e.index)).to.deep.equal([
      0, 14, 28, 42, 56, 70, 84, 98, 112, 126, 140, 154, 168, 182, 196, 210, 224, 238, 252, 266, 280, 294,
    ])
    expect(page.total).to.equal(22)
  })

  it('gives the total of the whole table without a filter, and an empty page past the end', async () => {
    const page = await store.queryEvents({}, {limit: 10, offset: 295})
    expect(page.total).to.equal(300)
    expect(page.items.map((e) => e.index)).to.deep.equal([295, 296, 297, 298, 299])
    expect((await store.queryEvents({}, {limit: 10, offset: 300})).items).to.deep.equal([])
  })

  it('gets events by id, several at once, and misses unknown ids', async () => {
    expect(await store.getEvent(events[7]!.id)).to.deep.equal(events[7])
    expect(await store.getEvent('00000000-0000-4000-8000-000000000000')).to.equal(undefined)
    const found = await store.getEvents([events[1]!.id, 'nope', events[250]!.id])
    expect([...found.keys()]).to.have.members([events[1]!.id, events[250]!.id])
    expect(found.get(events[250]!.id)).to.deep.equal(events[250])
  })

  it('scans in index order within a range and under a filter', async () => {
    const scanned: number[] = []
    for await (const e of store.scanEvents({fromIndex: 10, toIndex: 20, filter: {agent_id: 'agent-1'}}))
      scanned.push(e.index)
    expect(scanned).to.deep.equal([13, 17])
    let count = 0
    for await (const e of store.scanEvents()) expect(e).to.deep.equal(events[count++])
    expect(count).to.equal(300)
  })

  it('returns the hash column in index order for any range', async () => {
    expect(await store.eventHashes()).to.deep.equal(events.map((e) => e.hash))
    expect(await store.eventHashes(5, 9)).to.deep.equal(events.slice(5, 9).map((e) => e.hash))
    expect(await store.eventHashes(299, 1000)).to.deep.equal([events[299]!.hash])
    expect(await store.count()).to.equal(300)
  })

  it('gives the same hashes joined in chunks, with their counts', async () => {
    const chunks: {count: number; hex: string}[] = []
    for await (const chunk of store.eventHashChunks()) chunks.push(chunk)
    expect(chunks.map((c) => c.hex).join('')).to.equal(events.map((e) => e.hash).join(''))
    expect(chunks.reduce((n, c) => n + c.count, 0)).to.equal(300)
  })

  it('gives a chunk empty when one of its hashes is not 64 characters (a hand-edited file)', async () => {
    const dir2 = tempDir()
    const other = await openSqlJsStore({dataDir: dir2})
    try {
      const maker = new EventMaker()
      const made = maker.many(3)
      made[1] = {...made[1]!, hash: made[1]!.hash.slice(0, 62)}
      await other.appendEvents(made)
      const chunks: {count: number; hex: string}[] = []
      for await (const chunk of other.eventHashChunks()) chunks.push(chunk)
      expect(chunks).to.deep.equal([{count: 3, hex: ''}])
    } finally {
      await other.close()
      removeDir(dir2)
    }
  })

  it('gives a chunk empty when one of its hashes is stored as text, not as its 32 bytes', async () => {
    const dir2 = tempDir()
    const other = await openSqlJsStore({dataDir: dir2})
    try {
      const made = new EventMaker().many(3)
      // Upper-case hex is kept as the text it is (only lower-case hex round-trips through a BLOB).
      made[2] = {...made[2]!, hash: made[2]!.hash.toUpperCase()}
      await other.appendEvents(made)
      const chunks: {count: number; hex: string}[] = []
      for await (const chunk of other.eventHashChunks()) chunks.push(chunk)
      expect(chunks).to.deep.equal([{count: 3, hex: ''}])
      expect(await other.eventHashes()).to.deep.equal(made.map((e) => e.hash))
    } finally {
      await other.close()
      removeDir(dir2)
    }
  })
})

describe('store scans across batch boundaries', () => {
  it('streams more events than one batch without losing or repeating any', async () => {
    const dir = tempDir()
    const store = await openSqlJsStore({dataDir: dir})
    try {
      const maker = new EventMaker()
      const total = 12_345
      for (let i = 0; i < total; i += 2500) await store.appendEvents(maker.many(Math.min(2500, total - i)))
      let expected = 0
      // Between batches the scan gives the event loop a turn (a server stays responsive).
      let turns = 0
      const tick = () => {
        turns++
        if (expected < total) setImmediate(tick)
      }
      setImmediate(tick)
      for await (const e of store.scanEvents()) expect(e.index).to.equal(expected++)
      expect(expected).to.equal(total)
      expect(turns, 'event loop turns during the scan').to.be.greaterThan(1)
      let agentTwo = 0
      for await (const e of store.scanEvents({filter: {agent_id: 'agent-2'}, fromIndex: 5})) {
        expect(e.index % 3).to.equal(2)
        agentTwo++
      }
      expect(agentTwo).to.equal(Array.from({length: total}, (_, i) => i).filter((i) => i >= 5 && i % 3 === 2).length)
    } finally {
      await store.close()
      removeDir(dir)
    }
  })

  it('joins more hashes than one chunk (65,536) into several, losing none', async () => {
    const dir = tempDir()
    const store = await openSqlJsStore({dataDir: dir})
    try {
      const maker = new EventMaker()
      const total = 65_536 + 700
      for (let i = 0; i < total; i += 10_000) await store.appendEvents(maker.many(Math.min(10_000, total - i)))
      const chunks: {count: number; hex: string}[] = []
      for await (const chunk of store.eventHashChunks()) chunks.push(chunk)
      expect(chunks.map((c) => c.count)).to.deep.equal([65_536, 700])
      expect(chunks.map((c) => c.hex).join('')).to.equal((await store.eventHashes()).join(''))
    } finally {
      await store.close()
      removeDir(dir)
    }
  })
})
