import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import * as path from 'node:path'
import type {EventHeader, StoredEvent} from '../../src/core/types.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {EventMaker, removeDir, tempDir} from './support.js'

const headerOf = (e: StoredEvent): EventHeader => ({
  id: e.id,
  agent_id: e.agent_id,
  action_type: e.action_type,
  action_name: e.action_name,
  action_status: e.action_status,
  timestamp: e.timestamp,
  labels: e.labels,
  sequence: e.sequence,
  index: e.index,
})

async function headers(
  store: SqlJsStore,
  options?: Parameters<SqlJsStore['scanEventHeaders']>[0],
): Promise<EventHeader[][]> {
  const batches: EventHeader[][] = []
  for await (const batch of store.scanEventHeaders(options)) batches.push(batch)
  return batches
}

async function events(store: SqlJsStore): Promise<StoredEvent[]> {
  const all: StoredEvent[] = []
  for await (const event of store.scanEvents()) all.push(event)
  return all
}

describe('sql.js store: scanEventHeaders (what a policy reads)', () => {
  let dir: string
  let store: SqlJsStore
  const maker = new EventMaker()
  const stored = maker.many(12_000, (i) => ({
    agent_id: i % 5 === 0 ? 'agent "quoted" \\ ü' : `agent-${i % 3}`,
    labels: (i % 4 === 0 ? {} : {env: i % 2 ? 'prod' : 'staging', note: 'a,b"c\\d \u00e9'}) as Record<string, string>,
    input: {big: 'x'.repeat(i % 50)},
  }))

  beforeEach(async () => {
    dir = tempDir()
    store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    await store.appendEvents(stored)
  })

  afterEach(async () => {
    await store.close().catch(() => undefined)
    removeDir(dir)
  })

  it('gives the header fields of every event, in index order, in batches', async () => {
    const batches = await headers(store)
    expect(batches.length).to.be.greaterThan(1)
    expect(batches.flat()).to.deep.equal(stored.map(headerOf))
  })

  it('applies the filter and the index range', async () => {
    const some = (await headers(store, {filter: {agent_id: 'agent-1'}, fromIndex: 100, toIndex: 9000})).flat()
    expect(some).to.deep.equal(
      stored.filter((e) => e.agent_id === 'agent-1' && e.index >= 100 && e.index < 9000).map(headerOf),
    )
  })

  it('reads rows of a hand-edited file (control characters, labels that are not JSON) as scanEvents does', async () => {
    await store.close()
    const sql = `UPDATE events SET agent_id = 'agent' || char(31) || 'x' WHERE "index" = 7;
      UPDATE events SET labels = 'not json' WHERE "index" = 11;
      UPDATE events SET action_name = 'a' || char(30) || 'b' WHERE "index" = 6001;`
    const cli = spawnSync('sqlite3', [path.join(dir, 'events.sqlite'), sql], {encoding: 'utf8'})
    expect(cli.status, cli.stderr).to.equal(0)
    store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    const read = (await headers(store)).flat()
    const expected = (await events(store)).map(headerOf)
    expect(read).to.deep.equal(expected)
    expect(read[7]!.agent_id).to.equal('agent\x1fx')
    expect(read[11]!.labels).to.equal('not json')
    expect(read[6001]!.action_name).to.equal('a\x1eb')
  })
})
