import {expect} from 'chai'
import fc from 'fast-check'
import {OPTIONAL_JSON_FIELDS, OPTIONAL_STRING_FIELDS, type Json, type StoredEvent} from '../../src/core/types.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {EventMaker, removeDir, tempDir} from './support.js'
import {execFileSync} from 'node:child_process'
import * as path from 'node:path'

describe('store schema: a stored event comes back exactly', () => {
  let dir: string
  let store: SqlJsStore

  beforeEach(async () => {
    dir = tempDir()
    store = await openSqlJsStore({dataDir: dir})
  })

  afterEach(async () => {
    await store.close().catch(() => undefined)
    removeDir(dir)
  })

  it('round-trips every field, keeps key order, and omits absent optional fields', async () => {
    const maker = new EventMaker()
    const full = maker.make({
      labels: {env: 'prod', 'team.name': 'Ünïcode ✓'},
      session_id: 's-1',
      trace_id: 't-1',
      span_id: 'sp-1',
      parent_id: 'p-1',
      input: {nested: [1, 2.5, 'x', {deep: true}], big: 2 ** 53 - 1},
      output: 'plain string',
      metadata: [null, false],
      error: 'it\u0000 broke "badly"',
      duration_ms: 0.1 + 0.2,
    })
    const bare = maker.make()
    await store.appendEvents([full, bare])
    expect(await store.getEvent(full.id)).to.deep.equal(full)
    expect(Object.keys((await store.getEvent(full.id))!)).to.deep.equal(Object.keys(full))
    const back = (await store.getEvent(bare.id))!
    expect(back).to.deep.equal(bare)
    for (const field of [...OPTIONAL_STRING_FIELDS, ...OPTIONAL_JSON_FIELDS, 'duration_ms'])
      expect(back).not.to.have.property(field)
  })

  it('keeps a JSON null in input/output/metadata apart from an absent field', async () => {
    const maker = new EventMaker()
    const nulls = maker.make({input: null, output: null, metadata: null})
    await store.appendEvents([nulls])
    const back = (await store.getEvent(nulls.id))!
    expect(back.input).to.equal(null)
    expect(back).to.have.property('output', null)
    expect(back).to.have.property('metadata', null)
  })

  it('stores times as integer milliseconds and gives back the text, years 0000 to 9999 (property)', async () => {
    // The contract's range, with the edges and the epoch's neighbours always in the sample.
    const first = Date.parse('0000-01-01T00:00:00.000Z')
    const last = Date.parse('9999-12-31T23:59:59.999Z')
    const edges = [first, first + 1, -1001, -1, 0, 1, 999, last - 1, last]
    const times = [...edges, ...fc.sample(fc.integer({min: first, max: last}), 300)].map((ms) =>
      new Date(ms).toISOString(),
    )
    const maker = new EventMaker()
    const events = times.map((timestamp, i) => maker.make({timestamp, recorded_at: times[times.length - 1 - i]}))
    await store.appendEvents(events)
    const found = await store.getEvents(events.map((e) => e.id))
    for (const event of events) expect(found.get(event.id)).to.deep.equal(event)
    // since inclusive, until exclusive, compared as times across the epoch and the year 0000.
    for (const [since, until] of [
      [edges[2]!, edges[5]!],
      [first, 0],
      [0, last],
      [first + 1, last],
    ]) {
      const filter = {since: new Date(since).toISOString(), until: new Date(until).toISOString()}
      const page = await store.queryEvents(filter, {limit: 1000, offset: 0})
      const expected = events.filter((e) => Date.parse(e.timestamp) >= since && Date.parse(e.timestamp) < until)
      expect(page.items.map((e) => e.index)).to.deep.equal(expected.map((e) => e.index))
    }
    await store.close()
    const types = execFileSync('sqlite3', [
      path.join(dir, 'events.sqlite'),
      'select distinct typeof(timestamp) || typeof(recorded_at) from events',
    ])
      .toString()
      .trim()
    expect(types).to.equal('integerinteger')
    store = await openSqlJsStore({dataDir: dir})
    const again = await store.getEvents(events.map((e) => e.id))
    for (const event of events) expect(again.get(event.id)).to.deep.equal(event)
  })

  it('round-trips arbitrary events (property), also after a reopen from the snapshot', async () => {
    // Through JSON once, as an HTTP body would be (turns -0 into 0).
    const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as Json)
    const text = fc.string({unit: 'grapheme', minLength: 1, maxLength: 20})
    const fields = fc.record(
      {
        agent_id: text,
        action_name: text,
        labels: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_.:-]{1,8}$/), fc.string({unit: 'grapheme'})),
        session_id: text,
        trace_id: text,
        span_id: text,
        parent_id: text,
        input: json,
        output: json,
        metadata: json,
        error: fc.string({unit: 'grapheme'}),
        duration_ms: fc.double({min: 0, noNaN: true, noDefaultInfinity: true}),
      },
      {requiredKeys: ['agent_id', 'action_name', 'labels']},
    )
    const maker = new EventMaker()
    const batches = fc
      .sample(fc.array(fields, {minLength: 1, maxLength: 8}), 25)
      .map((batch) => batch.map((f) => maker.make(f as Partial<StoredEvent>)))
    for (const batch of batches) await store.appendEvents(batch)
    const all = batches.flat()
    const check = async (s: SqlJsStore) => {
      const found = await s.getEvents(all.map((e) => e.id))
      for (const event of all) expect(found.get(event.id)).to.deep.equal(event)
    }
    await check(store)
    await store.close()
    store = await openSqlJsStore({dataDir: dir})
    await check(store)
  })
})
