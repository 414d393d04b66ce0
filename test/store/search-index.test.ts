import {expect} from 'chai'
import fc from 'fast-check'
import * as fs from 'node:fs'
import * as path from 'node:path'
import type {StoredEvent} from '../../src/core/types.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {Coverage, SEARCH_FILE, SearchDatabase} from '../../src/store/sqljs/search-database.js'
import {INSERT_TEXT, SEARCH_SCHEMA, type SearchSource} from '../../src/store/sqljs/search-text.js'
import {stopSearchThread} from '../../src/store/sqljs/search-index.js'
import {SqliteDatabase} from '../../src/store/sqljs/database.js'
import {EventMaker, removeDir, tempDir} from './support.js'

const dirs: string[] = []
const track = (dir: string) => (dirs.push(dir), dir)
const open = (dir: string) => openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})

/** The data directory as a crash would leave it: journals, events.sqlite and search.sqlite as they are now. */
function crashCopy(dir: string): string {
  const copy = track(tempDir())
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith('journal-') || name.endsWith('.sqlite'))
      fs.copyFileSync(path.join(dir, name), path.join(copy, name))
  }
  return copy
}

/** The indexes of the events matching `term`, and the total the store gives. */
async function found(store: SqlJsStore, term: string): Promise<{total: number; indexes: number[]}> {
  const {total, items} = await store.searchEvents({terms: [term]}, {limit: 1000, offset: 0})
  return {total, indexes: items.map((e) => e.index)}
}

/** The coverage recorded in a saved search.sqlite. */
async function savedCoverage(dir: string): Promise<{storeId: string; ranges: [number, number][]}> {
  const db = await SqliteDatabase.open(fs.readFileSync(path.join(dir, SEARCH_FILE)))
  try {
    const meta = (key: string) => db.prepare('SELECT value FROM search_meta WHERE key = ?').texts([key])[0]!
    return {storeId: meta('store_id'), ranges: JSON.parse(meta('coverage')) as [number, number][]}
  } finally {
    db.close()
  }
}

/** `count` events named `word-<i>` in their action_name, from the maker's next index. */
function named(maker: EventMaker, word: string, count: number): StoredEvent[] {
  return maker.many(count, () => ({action_name: `${word} step`}))
}

describe('store search index (search.sqlite, its own thread)', () => {
  after(() => dirs.forEach(removeDir))

  it('is saved beside events.sqlite on close and used again without re-indexing', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    let store = await open(dir)
    await store.appendEvents(named(maker, 'alpha', 5))
    await store.close()
    const saved = await savedCoverage(dir)
    expect(saved.ranges).to.deep.equal([[0, 5]])
    expect(saved.storeId).to.match(/^[0-9a-f]{32}$/)
    // events.sqlite has no text index of its own any more.
    const events = await SqliteDatabase.open(fs.readFileSync(path.join(dir, 'events.sqlite')))
    expect(events.prepare("SELECT count(*) FROM sqlite_master WHERE name LIKE 'events_fts%'").texts()).to.deep.equal([
      '0',
    ])
    events.close()

    store = await open(dir)
    expect(await found(store, 'alpha')).to.deep.equal({total: 5, indexes: [0, 1, 2, 3, 4]})
    await store.appendEvents(named(maker, 'beta', 2))
    expect(await found(store, 'beta')).to.deep.equal({total: 2, indexes: [5, 6]})
    await store.close()
    expect((await savedCoverage(dir)).ranges).to.deep.equal([[0, 7]])
  })

  it('after a crash, indexes the journalled events the saved index lacks, each once', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    let store = await open(dir)
    await store.appendEvents(named(maker, 'alpha', 3))
    await store.snapshot()
    await store.appendEvents(named(maker, 'alpha', 2))
    const copy = crashCopy(dir)
    await store.close()

    store = await open(copy)
    expect(await found(store, 'alpha')).to.deep.equal({total: 5, indexes: [0, 1, 2, 3, 4]})
    await store.close()
  })

  it('does not count twice an event indexed before the crash and replayed from the journal after it', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    let store = await open(dir)
    await store.snapshot()
    await store.appendEvents(named(maker, 'gamma', 4))
    // The copy's events.sqlite holds none of the four (they are in its journal), while the
    // search.sqlite put beside it (saved at close) covers all of them.
    const copy = crashCopy(dir)
    await store.close()
    expect((await savedCoverage(dir)).ranges).to.deep.equal([[0, 4]])
    fs.copyFileSync(path.join(dir, SEARCH_FILE), path.join(copy, SEARCH_FILE))
    store = await open(copy)
    expect(await found(store, 'gamma')).to.deep.equal({total: 4, indexes: [0, 1, 2, 3]})
    await store.close()
  })

  it('empties an index of another store, or one with events the store does not have, and rebuilds it', async () => {
    const a = track(tempDir())
    const b = track(tempDir())
    const storeA = await open(a)
    await storeA.appendEvents(named(new EventMaker(), 'apple', 6))
    await storeA.close()
    const storeB = await open(b)
    await storeB.appendEvents(named(new EventMaker(), 'banana', 2))
    await storeB.close()

    // Another store's index: nothing of it shows.
    fs.copyFileSync(path.join(a, SEARCH_FILE), path.join(b, SEARCH_FILE))
    let store = await open(b)
    expect(await found(store, 'apple')).to.deep.equal({total: 0, indexes: []})
    expect(await found(store, 'banana')).to.deep.equal({total: 2, indexes: [0, 1]})
    await store.close()

    // The store's own index, but newer than its events (an older events.sqlite put back).
    const older = track(tempDir())
    const store2 = await open(older)
    const maker = new EventMaker()
    await store2.appendEvents(named(maker, 'cherry', 2))
    await store2.close()
    const events = fs.readFileSync(path.join(older, 'events.sqlite'))
    store = await open(older)
    await store.appendEvents(named(maker, 'cherry', 3))
    await store.close()
    fs.writeFileSync(path.join(older, 'events.sqlite'), events)
    store = await open(older)
    expect(await found(store, 'cherry')).to.deep.equal({total: 2, indexes: [0, 1]})
    await store.close()
  })

  it('rebuilds an unreadable search.sqlite from the events', async () => {
    const dir = track(tempDir())
    let store = await open(dir)
    await store.appendEvents(named(new EventMaker(), 'delta', 3))
    await store.close()
    fs.writeFileSync(path.join(dir, SEARCH_FILE), 'not a database')
    store = await open(dir)
    expect(await found(store, 'delta')).to.deep.equal({total: 3, indexes: [0, 1, 2]})
    await store.close()
    expect((await savedCoverage(dir)).ranges).to.deep.equal([[0, 3]])
  })

  it('makes anew an index written in an earlier text format (JSON member names and numbers not indexed)', async () => {
    const dir = track(tempDir())
    let store = await open(dir)
    await store.appendEvents([new EventMaker().make({action_name: 'refund', input: {order_id: 98765}})])
    await store.close()
    const {storeId} = await savedCoverage(dir)
    // search.sqlite as the first format wrote it: the same store and coverage, no number, no text_format.
    const old = await SqliteDatabase.open()
    old.exec(SEARCH_SCHEMA)
    old.prepare(INSERT_TEXT).runRows([[0, 'agent', 'TOOL_CALL', 'refund', 'success', null, null, null, null, null]])
    old.prepare('INSERT INTO search_meta (key, value) VALUES (?, ?)').runRows([
      ['store_id', storeId],
      ['coverage', '[[0,1]]'],
    ])
    fs.writeFileSync(path.join(dir, SEARCH_FILE), old.export())
    old.close()
    store = await open(dir)
    expect(await found(store, '98765')).to.deep.equal({total: 1, indexes: [0]})
    expect(await found(store, 'order_id')).to.deep.equal({total: 1, indexes: [0]})
    await store.close()
  })

  it('moves the text index out of an events.sqlite written before search.sqlite existed', async () => {
    const dir = track(tempDir())
    let store = await open(dir)
    await store.appendEvents(named(new EventMaker(), 'epsilon', 3))
    await store.close()
    // The earlier layout: the FTS4 table inside events.sqlite, no search.sqlite.
    const db = await SqliteDatabase.open(fs.readFileSync(path.join(dir, 'events.sqlite')))
    db.exec(`CREATE VIRTUAL TABLE events_fts USING fts4(agent_id, action_type, action_name, action_status,
      labels, error, input, output, metadata, content='', matchinfo=fts3, tokenize=unicode61)`)
    fs.writeFileSync(path.join(dir, 'events.sqlite'), db.export())
    db.close()
    fs.rmSync(path.join(dir, SEARCH_FILE))
    store = await open(dir)
    expect(await found(store, 'epsilon')).to.deep.equal({total: 3, indexes: [0, 1, 2]})
    await store.close()
    const after = await SqliteDatabase.open(fs.readFileSync(path.join(dir, 'events.sqlite')))
    expect(after.prepare("SELECT count(*) FROM sqlite_master WHERE name LIKE 'events_fts%'").texts()).to.deep.equal([
      '0',
    ])
    after.close()
  })

  it('survives the loss of its thread: the next search opens the index again and misses nothing', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    const store = await open(dir)
    await store.appendEvents(named(maker, 'zeta', 3))
    expect((await found(store, 'zeta')).total).to.equal(3)
    await stopSearchThread()
    await store.appendEvents(named(maker, 'zeta', 2))
    expect(await found(store, 'zeta')).to.deep.equal({total: 5, indexes: [0, 1, 2, 3, 4]})
    await store.close()
  })

  it(
    'answers every search with at least the events stored before it, a prefix of the log, while ingest and a ' +
      'rebuild run (property)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.oneof(
              fc.record({append: fc.integer({min: 1, max: 40}), word: fc.constantFrom('red', 'green')}),
              fc.constant({search: true as const}),
            ),
            {minLength: 1, maxLength: 12},
          ),
          fc.boolean(),
          async (steps, dropIndex) => {
            const dir = track(tempDir())
            const maker = new EventMaker()
            const words: string[] = []
            let store = await open(dir)
            if (dropIndex) {
              // Start from a store whose index must be rebuilt while the steps run.
              await store.appendEvents(named(maker, 'red', 120))
              words.push(...Array(120).fill('red'))
              await store.close()
              fs.rmSync(path.join(dir, SEARCH_FILE))
              store = await open(dir)
            }
            const pending: Promise<void>[] = []
            for (const step of steps) {
              if ('append' in step) {
                await store.appendEvents(named(maker, step.word, step.append))
                words.push(...Array(step.append).fill(step.word))
              } else {
                // A search sees every event stored before it was asked, and maybe some stored while
                // it waited for its answer: always a prefix of the log.
                const before = words.filter((w) => w === 'red').length
                pending.push(
                  found(store, 'red').then((result) => {
                    const red = words.flatMap((w, i) => (w === 'red' ? [i] : []))
                    expect(result.total).to.be.at.least(before)
                    expect(result.indexes).to.deep.equal(red.slice(0, Math.min(result.total, 1000)))
                  }),
                )
              }
            }
            await Promise.all(pending)
            const red = words.flatMap((w, i) => (w === 'red' ? [i] : []))
            expect(await found(store, 'red')).to.deep.equal({total: red.length, indexes: red.slice(0, 1000)})
            await store.close()
            removeDir(dir)
          },
        ),
        {numRuns: 6},
      )
    },
  )

  describe('SearchDatabase', () => {
    it('indexes an event once: a second feeding of the same index is skipped, whatever its text', async () => {
      const dir = track(tempDir())
      const database = await SearchDatabase.open(dir)
      const source = (index: number, name: string): SearchSource => [
        index,
        'agent',
        'TOOL_CALL',
        name,
        'success',
        '{}',
        null,
        null,
        null,
        null,
      ]
      await database.missing('store-1', 0)
      database.add([source(0, 'alpha'), source(1, 'alpha')])
      // Fed again (say, replayed from the journal after the index was saved): not indexed again.
      database.add([source(1, 'beta'), source(2, 'beta')])
      expect(database.search('"alpha"', 10, 0)).to.deep.equal({total: 2, indexes: [0, 1]})
      expect(database.search('"beta"', 10, 0)).to.deep.equal({total: 1, indexes: [2]})
      await database.save()
      database.close()
      expect(await savedCoverage(dir)).to.deep.equal({storeId: 'store-1', ranges: [[0, 3]]})
    })
  })

  describe('Coverage', () => {
    it('agrees with a set of indexes (property)', () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({min: 0, max: 60}), {maxLength: 80}),
          fc.integer({min: 0, max: 70}),
          (added, end) => {
            const coverage = new Coverage()
            const set = new Set<number>()
            for (const index of added) {
              coverage.add(index)
              set.add(index)
            }
            for (let i = 0; i <= 70; i++) expect(coverage.has(i)).to.equal(set.has(i))
            const missing = coverage
              .missing(end)
              .flatMap(([from, to]) => Array.from({length: to - from}, (_, k) => from + k))
            expect(missing).to.deep.equal(Array.from({length: end}, (_, i) => i).filter((i) => !set.has(i)))
            for (let k = 1; k < coverage.ranges.length; k++)
              expect(coverage.ranges[k]![0]).to.be.greaterThan(coverage.ranges[k - 1]![1])
          },
        ),
      )
    })
  })
})
