import {expect} from 'chai'
import fs from 'node:fs'
import path from 'node:path'
import {computeEventHash} from '../../src/core/event/index.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {openPostgresStore, StoreError} from '../../src/store/index.js'
import {SCHEMA_VERSION} from '../../src/store/postgres/migrations.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'
import {postgresPerTest, rowsOf, TEST_DATABASE_URL} from '../support/stores.js'

describe('the PostgreSQL store', function () {
  let services: AuditServices | undefined

  const fresh = postgresPerTest(async () => {
    await services?.close()
    services = undefined
  })

  const sql = (text: string, params: unknown[] = [], url = fresh.url) => rowsOf(url, text, params)

  it('gives back what it was given, U+0000 and numbers jsonb would change included; its hash verifies', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const input = {z: 1, a: [0.1, 1e21, -0, 5e-324, 'nul \u0000 here'], nested: {'\u0000key': null}}
    const {event} = await services.ingest.recordOne(makeEvent({input, error: 'bad \u0000 byte', session_id: 's\u0000'}))
    const read = (await services.store.getEvent(event.id))!
    // As JSON: -0 is written 0 by every store.
    expect(read).to.deep.equal(JSON.parse(JSON.stringify(event)))
    expect(computeEventHash(read)).to.equal(read.hash)
    // What psql shows: the columns, with U+FFFD where PostgreSQL cannot hold U+0000.
    const [row] = await sql("SELECT error, input->'a'->4 AS text FROM events")
    expect(row).to.deep.equal({error: 'bad \uFFFD byte', text: 'nul \uFFFD here'})
    expect((await services.integrity.verifyAll()).valid).to.equal(true)
  })

  it('stores and finds an event with a word longer than a tsvector lexeme', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const word = 'q'.repeat(70_000)
    await services.ingest.recordBatch([makeEvent({input: `${word} tail`}), makeEvent({input: 'other'})])
    const found = await services.store.searchEvents({terms: [word]}, {limit: 10, offset: 0})
    expect(found.total).to.equal(1)
    expect(found.items[0]!.input).to.equal(`${word} tail`)
  })

  it('finds a phrase of a document with more pairs of words than it keeps, and records the largest', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    // 12,000 different words: their pairs pass what one document keeps (search-text.ts).
    const words = Array.from({length: 12_000}, (_, i) => `w${i}`).join(' ')
    // 64,000 different words of three 3-byte letters: the most lexeme bytes the searched text allows.
    const word = (i: number) =>
      [0, 1, 2].map((k) => String.fromCodePoint(0x4e00 + ((i >> (k * 6)) & 63) + k * 64)).join('')
    const wide = Array.from({length: 64_000}, (_, i) => word(i)).join(' ')
    await services.ingest.recordBatch([makeEvent({input: words}), makeEvent({input: wide}), makeEvent({input: 'w1'})])
    const search = async (...terms: string[]) =>
      (await services!.store.searchEvents({terms}, {limit: 10, offset: 0})).items.map((e) => e.index)
    expect(await search('w11998 w11999')).to.deep.equal([0])
    expect(await search('w1 w2')).to.deep.equal([0])
    expect(await search('w2 w1')).to.deep.equal([])
    // A phrase within the positions a tsvector keeps (16,383), and a word past them.
    expect(await search(`${word(5_000)} ${word(5_001)}`)).to.deep.equal([1])
    expect(await search(word(60_000))).to.deep.equal([1])
  })

  it('rebuilds the search column of a previous-version database once, so its phrases are found', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    await services.ingest.recordBatch([
      makeEvent({input: {path: '/srv/customer-5.json'}}),
      makeEvent({input: {path: '/srv/customer-6.json'}, labels: {team: 'team-5'}}),
    ])
    await services.close()
    services = undefined
    // The column as version 3 wrote it: the tokens with their positions, without the pairs.
    await sql(`UPDATE events SET search = (SELECT string_agg(quote_literal(l.lexeme) || ':' ||
      array_to_string(l.positions, ','), ' ') FROM unnest(search) AS l WHERE l.positions IS NOT NULL)::tsvector`)
    await sql('UPDATE schema_version SET version = 3')
    const pairs = `SELECT count(*)::int AS n FROM events WHERE search @@ '''customer 5'''::tsquery`
    expect(await sql(pairs)).to.deep.equal([{n: 0}])

    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    expect(await sql('SELECT version FROM schema_version')).to.deep.equal([{version: SCHEMA_VERSION}])
    expect(await sql(pairs)).to.deep.equal([{n: 1}])
    const found = await services.store.searchEvents({terms: ['customer-5']}, {limit: 10, offset: 0})
    expect(found.items.map((e) => e.index)).to.deep.equal([0])
    expect(found.total).to.equal(1)
  })

  it('scans every stored row across a removed run of indexes and under a negative index', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    for (let i = 0; i < 12; i++)
      await services.ingest.recordBatch(Array.from({length: 1000}, () => makeEvent({agent_id: `agent-${i % 3}`})))
    // More than one scan batch (5,000) removed, and a row moved under index 0, behind the service's back.
    await sql('DELETE FROM events WHERE "index" BETWEEN 4990 AND 10010')
    await sql('UPDATE events SET "index" = -5 WHERE "index" = 11000')
    const expected = [-5, ...range(0, 4990), ...range(10_011, 11_000), ...range(11_001, 12_000)]
    const scanned: number[] = []
    for await (const event of services.store.scanEvents({toIndex: 12_000})) scanned.push(event.index)
    expect(scanned).to.deep.equal(expected)
    const hashed: number[] = []
    for await (const {links} of services.store.scanHashedEvents({toIndex: 12_000}))
      hashed.push(...links.map((link) => link.index))
    expect(hashed).to.deep.equal(expected)
    const verdict = await services.integrity.verifyAll()
    expect(verdict.valid).to.equal(false)
    expect(verdict.index_gap).to.include({expected_index: 0, actual_index: -5})
  })

  it('searches a JSON field in the order of its members as it reads them back (jsonb order)', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const {event} = await services.ingest.recordOne(makeEvent({input: {é: 'three', b: 'one', a: 'two'}}))
    expect(Object.keys((await services.store.getEvent(event.id))!.input as object)).to.deep.equal(['a', 'b', 'é'])
    const total = async (term: string) =>
      (await services!.store.searchEvents({terms: [term]}, {limit: 1, offset: 0})).total
    expect(await total('two b one e')).to.equal(1)
    expect(await total('one a')).to.equal(0)
  })

  it('keeps a phrase inside one field, as the sql.js store does', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    await services.ingest.recordOne(makeEvent({action_name: 'refund', error: 'order failed'}))
    const across = await services.store.searchEvents({terms: ['refund order']}, {limit: 10, offset: 0})
    const inside = await services.store.searchEvents({terms: ['order failed']}, {limit: 10, offset: 0})
    expect([across.total, inside.total]).to.deep.equal([0, 1])
  })

  it('gives a periodic turn to one of two processes at once, and again only after the period', async () => {
    const [one, two] = [
      await openPostgresStore({databaseUrl: fresh.url}),
      await openPostgresStore({databaseUrl: fresh.url}),
    ]
    try {
      const first = await Promise.all([one.claimTurn('timestamp', 60_000), two.claimTurn('timestamp', 60_000)])
      expect(first.filter(Boolean)).to.have.length(1)
      expect(await two.claimTurn('timestamp', 60_000)).to.equal(false)
      // Another name is another turn; a period already past gives the turn again.
      expect(await two.claimTurn('other', 60_000)).to.equal(true)
      await new Promise((r) => setTimeout(r, 20))
      expect(await one.claimTurn('timestamp', 10)).to.equal(true)
    } finally {
      await one.close()
      await two.close()
    }
  })

  it('keeps the embedded TSA in the database: processes on other data directories sign as one TSA', async () => {
    const otherDir = await tempDir()
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const other = await openAudit({dataDir: otherDir, databaseUrl: fresh.url})
    try {
      await services.ingest.recordOne(makeEvent())
      await services.timestamps.issue()
      await other.refresh()
      await other.ingest.recordOne(makeEvent())
      await other.timestamps.issue()
      expect(await other.timestamps.trustAnchorsPem()).to.deep.equal(await services.timestamps.trustAnchorsPem())
      const latest = await services.timestamps.verifyLatest()
      expect(latest).to.include({valid: true, tree_size: 2})
      expect(fs.existsSync(path.join(fresh.dir, 'tsa')) || fs.existsSync(path.join(otherDir, 'tsa'))).to.equal(false)
    } finally {
      await other.close()
      await removeDir(otherDir)
    }
  })

  it('refuses a database whose schema is newer than the program, in one sentence', async () => {
    await (await openPostgresStore({databaseUrl: fresh.url})).close()
    await sql('UPDATE schema_version SET version = 99')
    const error = await openPostgresStore({databaseUrl: fresh.url}).catch((e: unknown) => e)
    expect(error).to.be.instanceOf(StoreError).with.property('reason', 'database')
    expect(error).to.have.property('code', 'validation_error')
    expect((error as Error).message).to.match(
      new RegExp(
        `^the database holds schema version 99, newer than this program's ${SCHEMA_VERSION}: upgrade audit-trail$`,
      ),
    )
  })

  it('makes one gap-free log of two writers whose reads the other overtakes; a retried id is stored once', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const otherDir = await tempDir()
    const other = await openAudit({dataDir: otherDir, databaseUrl: fresh.url})
    try {
      // Each writer reads without the lock and writes only if the log has not moved since (group-commit.ts):
      // two at once keep overtaking each other, and every overtaken group must be sequenced again.
      const answers = await Promise.all(
        [services, other].flatMap((writer, w) =>
          range(0, 4).map(async (loop) => {
            const statuses: number[] = []
            for (let i = 0; i < 15; i++) {
              const agent = `agent-${(loop + i) % 3}`
              const id = `0190b5a4-0000-7000-8000-${String(i).padStart(12, '0')}`
              const event = loop === 0 ? makeEvent({id, agent_id: 'agent-r', input: {i}}) : makeEvent({agent_id: agent})
              statuses.push((await writer.ingest.recordOne(event)).status)
            }
            return {w, loop, statuses}
          }),
        ),
      )
      // Each of the 15 retried ids went in once, on whichever writer came first; the other was answered 200.
      const retried = answers.filter((a) => a.loop === 0).flatMap((a) => a.statuses)
      expect(retried.filter((status) => status === 201)).to.have.length(15)
      expect(retried.filter((status) => status === 200)).to.have.length(15)
      const size = 2 * 3 * 15 + 15
      const rows = await sql('SELECT "index"::int AS i FROM events ORDER BY "index"')
      expect(rows.map((row) => row.i)).to.deep.equal(range(0, size))
      expect(await sql('SELECT size::int AS n FROM log_state')).to.deep.equal([{n: size}])
      const verdict = await other.integrity.verifyAll()
      expect(verdict.valid, JSON.stringify(verdict)).to.equal(true)
      expect(verdict.events_checked).to.equal(size)
    } finally {
      await other.close()
      await removeDir(otherDir)
    }
  })

  it('answers 503 storage_unavailable, not 500, when the database goes away, and records nothing', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    await services.ingest.recordOne(makeEvent())
    // No new connections, and every connection of the service ended from the server side, as a restart does.
    const name = new URL(fresh.url).pathname.slice(1)
    await sql(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`, [], TEST_DATABASE_URL)
    await sql('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name], TEST_DATABASE_URL)
    try {
      const error = await services.ingest.recordOne(makeEvent()).catch((e: unknown) => e)
      expect(error).to.have.property('code', 'storage_unavailable')
      const health = await services.refresh().catch((e: unknown) => e)
      expect(health).to.have.property('code', 'storage_unavailable')
    } finally {
      await sql(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`, [], TEST_DATABASE_URL)
    }
    // Reconnected by itself: the next event follows the first.
    expect((await services.ingest.recordOne(makeEvent())).event.index).to.equal(1)
  })
})

function range(from: number, to: number): number[] {
  return Array.from({length: to - from}, (_, i) => from + i)
}
