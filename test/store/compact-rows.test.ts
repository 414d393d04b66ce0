/**
 * Salts and commitments kept in their binary form (src/store/digests.ts, docs/design.md): a data
 * directory of schema 4 and a database of schema 10, both written by the service before the change
 * (fixtures/schema-4 and fixtures/postgres-10.sql, a `pg_dump --inserts` of it, with what that
 * version answered beside them), migrate on open and give back the same events, root, proofs,
 * consistency proof and evidence package, erasures and their proofs included.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import pg from 'pg'
import {startTestApi, tempDir, removeDir, type TestApi} from '../support/harness.js'
import {createTestDatabase, forEachStore} from '../support/stores.js'

const FIXTURES = path.join(import.meta.dirname, 'fixtures')
const sqlite = (file: string, sql: string) => execFileSync('sqlite3', [file, sql]).toString().trim()

interface Expected {
  events: Array<{id: string; index: number}>
  root: {merkle_root: string; tree_size: number}
  proofs: unknown[]
  consistency: unknown
  package: Record<string, unknown>
}

const expected = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Expected

/** The package's parts that do not depend on when it was made. */
const lasting = (pkg: Record<string, unknown>) => {
  const {merkle, events, chains, proofs, keys, erasures} = pkg
  return {merkle, events, chains, proofs, keys, erasures}
}

async function expectSameAnswers(api: TestApi, old: Expected): Promise<void> {
  const events = await api.request('GET', '/v1/events?limit=1000')
  expect(events.body).to.deep.equal(old.events)
  const root = await api.request('GET', '/v1/merkle/root')
  expect(root.body).to.include({merkle_root: old.root.merkle_root, tree_size: old.root.tree_size})
  for (const [i, event] of old.events.entries()) {
    expect((await api.request('GET', `/v1/merkle/proof/${event.id}`)).body).to.deep.equal(old.proofs[i])
  }
  expect((await api.request('GET', '/v1/merkle/consistency?first=5')).body).to.deep.equal(old.consistency)
  expect(lasting((await api.request('GET', '/v1/export')).body)).to.deep.equal(lasting(old.package))
  expect((await api.request('GET', '/v1/verify')).body).to.include({valid: true, events_checked: old.events.length})
}

/** An erasure after the migration: the member and its salt go, the event still verifies. */
async function expectErasure(api: TestApi, old: Expected): Promise<void> {
  const target = old.events[2]!.id
  const erased = await api.request('POST', '/v1/erasures', {body: {ids: [target], members: ['input'], reason: 'test'}})
  expect(erased.status).to.equal(201)
  expect(erased.body).to.include({erased_events: 1, erased_members: 1})
  const event = (await api.request('GET', `/v1/events/${target}`)).body
  expect(event).to.not.have.property('input')
  expect(Object.keys(event.salts)).to.deep.equal(['output'])
  expect(Object.keys(event.commitments)).to.deep.equal(['input', 'output'])
  expect((await api.request('GET', '/v1/verify')).body).to.include({valid: true})
}

forEachStore((store) => {
  describe('salts and commitments as 32-byte binary', () => {
    let dir: string
    let api: TestApi | undefined
    let drop: (() => Promise<void>) | undefined
    beforeEach(async () => {
      dir = await tempDir()
    })
    afterEach(async () => {
      await api?.close()
      api = undefined
      await drop?.()
      drop = undefined
      await removeDir(dir)
    })

    if (store === 'sqljs') {
      it('migrates a schema 4 data directory on open, keeping every answer and proof', async () => {
        const file = path.join(dir, 'events.sqlite')
        fs.copyFileSync(path.join(FIXTURES, 'schema-4', 'events.sqlite'), file)
        expect(sqlite(file, "select count(*) from events where typeof(salts) = 'text'")).to.not.equal('0')
        const old = expected('schema-4/expected.json')
        api = await startTestApi({dataDir: dir})
        await expectSameAnswers(api, old)
        await api.close()
        api = undefined
        expect(sqlite(file, "select value from store_meta where key = 'schema_version'")).to.equal('5')
        expect(
          sqlite(file, "select count(*) from events where typeof(salts) = 'text' or typeof(commitments) = 'text'"),
        ).to.equal('0')
        // One byte naming the members, then 32 bytes each: the first event's three commitments.
        expect(
          sqlite(file, 'select length(commitments), hex(substr(commitments, 1, 1)) from events where "index" = 0'),
        ).to.equal('97|07')
        api = await startTestApi({dataDir: dir})
        await expectSameAnswers(api, old)
        await expectErasure(api, old)
      })
    } else {
      it('migrates a schema 10 database on open, keeping every answer and proof', async () => {
        const database = await createTestDatabase({empty: true})
        drop = database.drop
        const client = new pg.Client({connectionString: database.url})
        await client.connect()
        try {
          await client.query(fs.readFileSync(path.join(FIXTURES, 'postgres-10.sql'), 'utf8'))
        } finally {
          await client.end()
        }
        const old = expected('postgres-10-expected.json')
        api = await startTestApi({dataDir: dir, audit: {databaseUrl: database.url}})
        await expectSameAnswers(api, old)
        const check = new pg.Client({connectionString: database.url})
        await check.connect()
        try {
          const types = await check.query<{type: string}>(
            "SELECT atttypid::regtype::text AS type FROM pg_attribute WHERE attrelid = 'events'::regclass " +
              "AND attname IN ('salts', 'commitments')",
          )
          expect(types.rows.map((row) => row.type)).to.deep.equal(['bytea', 'bytea'])
          const first = await check.query<{n: number; mask: number}>(
            'SELECT length(commitments) AS n, get_byte(commitments, 0) AS mask FROM events WHERE "index" = 0',
          )
          expect(first.rows[0]).to.deep.equal({n: 97, mask: 7})
        } finally {
          await check.end()
        }
        await expectErasure(api, old)
      })
    }
  })
})
