/**
 * Times read back from a data directory (schema.ts, EVENT_JSON and timeOf): the store keeps them as
 * INTEGER milliseconds and formats them while decoding a row; every read gives the text written, from
 * the first millisecond of year 0000 to the last of 9999, and a value edited by hand as it is.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import * as path from 'node:path'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {EventMaker, removeDir, tempDir} from './support.js'

const TIMES = [
  '0000-01-01T00:00:00.000Z',
  '0001-12-31T23:59:59.999Z',
  '1969-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00.000Z',
  '2026-11-28T14:05:31.319Z',
  '2028-02-29T12:00:00.001Z',
  '9999-12-31T23:59:59.999Z',
]

describe('times read back from a data directory', () => {
  let dir: string
  let store: SqlJsStore | undefined
  beforeEach(() => {
    dir = tempDir()
  })
  afterEach(async () => {
    await store?.close()
    store = undefined
    removeDir(dir)
  })

  const read = async () => {
    const events = []
    for await (const event of store!.scanEvents()) events.push(event)
    return events
  }

  it('gives back each time as written, in every read', async () => {
    store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    const maker = new EventMaker()
    const stored = TIMES.map((time, i) => maker.make({timestamp: time, recorded_at: TIMES[TIMES.length - 1 - i]!}))
    await store.appendEvents(stored)
    expect(await read()).to.deep.equal(stored)
    expect(await store.getEvent(stored[0]!.id)).to.deep.equal(stored[0])
  })

  it('reads a time edited by hand (text, a real number, an integer past 9999) as it is', async () => {
    store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    await store.appendEvents(new EventMaker().many(3))
    await store.close()
    store = undefined
    const sql = `UPDATE events SET timestamp = 'yesterday' WHERE "index" = 0;
      UPDATE events SET timestamp = 1.5 WHERE "index" = 1;
      UPDATE events SET recorded_at = 253402300800000 WHERE "index" = 2;`
    const cli = spawnSync('sqlite3', [path.join(dir, 'events.sqlite'), sql], {encoding: 'utf8'})
    expect(cli.status, cli.stderr).to.equal(0)
    store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    const events = await read()
    expect([events[0]!.timestamp, events[1]!.timestamp, events[2]!.recorded_at]).to.deep.equal([
      'yesterday',
      1.5,
      253402300800000,
    ])
  })
})
