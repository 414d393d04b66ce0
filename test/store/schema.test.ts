import {expect} from 'chai'
import fc from 'fast-check'
import {OPTIONAL_JSON_FIELDS, OPTIONAL_STRING_FIELDS, type Json, type StoredEvent} from '../../src/core/types.js'
import {OPTIONAL_COLUMNS} from '../../src/store/schema.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {EventMaker, removeDir, tempDir} from './support.js'

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

  it('maps every optional field of types.ts to a column', () => {
    const mapped = OPTIONAL_COLUMNS.map(([field]) => field).sort()
    expect(mapped).to.deep.equal([...OPTIONAL_STRING_FIELDS, ...OPTIONAL_JSON_FIELDS, 'duration_ms'].sort())
  })

  it('round-trips every field, keeps key order, and omits absent optional fields', async () => {
    const maker = new EventMaker()
    const full = maker.make({
      labels: {env: 'prod', 'team.name': 'Ünïcode ✓'},
      session_id: 's-1', trace_id: 't-1', span_id: 'sp-1', parent_id: 'p-1',
      input: {nested: [1, 2.5, 'x', {deep: true}], big: 2 ** 53 - 1},
      output: 'plain string', metadata: [null, false],
      error: 'it\u0000 broke "badly"', duration_ms: 0.1 + 0.2,
    })
    const bare = maker.make()
    await store.appendEvents([full, bare])
    expect(await store.getEvent(full.id)).to.deep.equal(full)
    expect(Object.keys((await store.getEvent(full.id))!)).to.deep.equal(Object.keys(full))
    const back = (await store.getEvent(bare.id))!
    expect(back).to.deep.equal(bare)
    for (const field of [...OPTIONAL_STRING_FIELDS, ...OPTIONAL_JSON_FIELDS, 'duration_ms']) expect(back).not.to.have.property(field)
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

  it('round-trips arbitrary events (property), also after a reopen from the snapshot', async () => {
    // Through JSON once, as an HTTP body would be (turns -0 into 0).
    const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as Json)
    const text = fc.string({unit: 'grapheme', minLength: 1, maxLength: 20})
    const fields = fc.record(
      {
        agent_id: text, action_name: text, labels: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_.:-]{1,8}$/), fc.string({unit: 'grapheme'})),
        session_id: text, trace_id: text, span_id: text, parent_id: text,
        input: json, output: json, metadata: json, error: fc.string({unit: 'grapheme'}),
        duration_ms: fc.double({min: 0, noNaN: true, noDefaultInfinity: true}),
      },
      {requiredKeys: ['agent_id', 'action_name', 'labels']},
    )
    const maker = new EventMaker()
    const batches = fc.sample(fc.array(fields, {minLength: 1, maxLength: 8}), 25).map((batch) => batch.map((f) => maker.make(f as Partial<StoredEvent>)))
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
