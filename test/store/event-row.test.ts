import {expect} from 'chai'
import {readdirSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'
import {STORED_FIELDS} from '../../src/core/event/fields.js'
import type {StoredEvent} from '../../src/core/types.js'
import {EVENT_ROW} from '../../src/store/event-row.js'
import {openPostgresStore, openSqlJsStore, type EventStore} from '../../src/store/index.js'
import {connected, postgresPerTest} from '../support/stores.js'
import {EventMaker, removeDir, tempDir} from './support.js'

const SRC_STORE = path.resolve(import.meta.dirname, '../../src/store')

/** An event with every declared member set, each to a value no other member has. */
function everyMember(maker: EventMaker): StoredEvent {
  const salt = (c: string) => c.repeat(64)
  return maker.make({
    labels: {env: 'prod', team: 'ünïcode'},
    session_id: 'session-1',
    trace_id: 'trace-1',
    span_id: 'span-1',
    parent_id: 'parent-1',
    input: {query: 'q', n: 1.5},
    output: ['out', null],
    metadata: {deep: {x: true}},
    error: 'failed',
    duration_ms: 12.25,
    signature: 'eyJhbGciOiJFZERTQSJ9..c2lnbmF0dXJl',
    salts: {input: salt('a'), output: salt('b')},
    commitments: {input: salt('c'), output: salt('d'), metadata: salt('e'), error: salt('f')},
    erased: {metadata: 'erasure-1', error: 'erasure-1'},
  } as Partial<StoredEvent>)
}

/** The TypeScript files under a folder, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name)
    return statSync(file).isDirectory() ? sources(file) : file.endsWith('.ts') ? [file] : []
  })
}

describe('the event row, declared once (src/store/event-row.ts)', () => {
  it('declares every member of a stored event, once each', () => {
    const names = EVENT_ROW.map((field) => field.name)
    expect(new Set(names).size).to.equal(names.length)
    expect([...names].sort()).to.deep.equal([...STORED_FIELDS].sort())
  })

  it('is the only place a store module lists event fields as SQL columns', () => {
    const fields = EVENT_ROW.map((field) => field.name).join('|')
    // Three or more field names in a row, bare or double-quoted, separated by commas: a column list.
    const name = `"?\\b(?:${fields})\\b"?`
    const list = new RegExp(`${name}\\s*,\\s*${name}\\s*,\\s*${name}`, 'g')
    const found: string[] = []
    for (const file of sources(SRC_STORE)) {
      if (file.endsWith('event-row.ts')) continue
      const text = readFileSync(file, 'utf8')
      for (const match of text.matchAll(list)) found.push(`${path.relative(SRC_STORE, file)}: ${match[0]}`)
    }
    expect(found).to.deep.equal([])
  })

  const roundTrip = async (open: () => Promise<EventStore>) => {
    const maker = new EventMaker()
    const full = everyMember(maker)
    const bare = maker.make()
    let store = await open()
    try {
      await store.appendEvents([full, bare])
      for (const field of EVENT_ROW) expect(full, field.name).to.have.property(field.name)
      const back = (await store.getEvent(full.id))!
      expect(back).to.deep.equal(full)
      expect(Object.keys(back)).to.deep.equal(EVENT_ROW.map((field) => field.name))
      const bareBack = (await store.getEvent(bare.id))!
      expect(Object.keys(bareBack)).to.deep.equal(
        EVENT_ROW.filter((field) => field.required).map((field) => field.name),
      )
      const page = await store.queryEvents({}, {limit: 10, offset: 0})
      expect(page.items).to.deep.equal([full, bare])
      await store.close()
      store = await open()
      expect(await store.getEvent(full.id)).to.deep.equal(full)
    } finally {
      await store.close().catch(() => undefined)
    }
  }

  it('round-trips every declared member through the data directory', async () => {
    const dir = tempDir()
    try {
      await roundTrip(() => openSqlJsStore({dataDir: dir}))
    } finally {
      removeDir(dir)
    }
  })

  describe('on PostgreSQL', () => {
    const fresh = postgresPerTest()

    it('round-trips every declared member', async () => {
      await roundTrip(() => openPostgresStore({databaseUrl: fresh.url}))
    })

    it('reads a row kept in `verbatim` by a database of schema 7 after migrating it', async () => {
      const maker = new EventMaker()
      const event = everyMember(maker)
      const withNul = {...event, error: 'nul \u0000 here'}
      let store = await openPostgresStore({databaseUrl: fresh.url})
      await store.appendEvents([withNul])
      await store.close()
      // The array as schema 7 wrote it: the index first, the commitment members last.
      const v7 = [
        ...['index', 'id', 'agent_id', 'action_type', 'action_name', 'action_status', 'timestamp', 'labels'],
        ...['session_id', 'trace_id', 'span_id', 'parent_id', 'input', 'output', 'metadata', 'error'],
        ...['duration_ms', 'sequence', 'prev_hash', 'recorded_at', 'hash', 'signature', 'salts', 'commitments'],
        'erased',
      ]
      const json = ['labels', 'input', 'output', 'metadata', 'salts', 'commitments', 'erased']
      const row = v7.map((name) => {
        const value = (withNul as unknown as Record<string, unknown>)[name]
        return json.includes(name) ? JSON.stringify(value) : value
      })
      await connected(async (client) => {
        await client.query('UPDATE events SET verbatim = $1', [JSON.stringify(row)])
        await client.query('UPDATE schema_version SET version = 7')
      }, fresh.url)
      store = await openPostgresStore({databaseUrl: fresh.url})
      try {
        expect(await store.getEvent(event.id)).to.deep.equal(withNul)
      } finally {
        await store.close()
      }
    })
  })
})
