/**
 * Gone means gone (docs/erasure.md): after the answer to an erasure, a marker from an erased member
 * is in no file of the data directory (events.sqlite with its free pages, the journals, search.sqlite),
 * and on PostgreSQL in no row pg_dump writes after the erasure's VACUUM.
 */
import {execFileSync} from 'node:child_process'
import {readdirSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'
import {expect} from 'chai'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {SEARCH_FILE} from '../../src/store/sqljs/search-database.js'
import {SqliteDatabase} from '../../src/store/sqljs/database.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'
import {newMarker} from '../support/markers.js'
import {createTestDatabase, postgresAvailable, postgresSkips} from '../support/stores.js'

/**
 * The files of a directory, recursively, that hold `text` (as grep -rl would list them). A file
 * gone between the listing and the read is a temporary file renamed into place meanwhile (the
 * search thread saves search.sqlite so): grep would skip it too.
 */
function filesHolding(dir: string, text: string): string[] {
  const needle = Buffer.from(text)
  const holds = (file: string) => {
    try {
      return statSync(file).isFile() && readFileSync(file).includes(needle)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
  }
  return readdirSync(dir, {recursive: true, encoding: 'utf8'})
    .map((name) => path.join(dir, name))
    .filter(holds)
    .map((file) => path.relative(dir, file))
}

/** The terms of search.sqlite's index (fts4aux): FTS stores terms prefix-compressed, which grep may miss. */
async function indexedTerms(dataDir: string): Promise<Set<string>> {
  const db = await SqliteDatabase.open(readFileSync(path.join(dataDir, SEARCH_FILE)))
  try {
    db.exec('CREATE VIRTUAL TABLE temp.terms USING fts4aux(main, events_fts)')
    return new Set(db.prepare('SELECT DISTINCT term FROM temp.terms').texts())
  } finally {
    db.close()
  }
}

/**
 * Events with the marker in each payload member, one too large for a page of its own and one with a
 * U+0000, among others.
 */
async function seed(services: AuditServices, marker: string, keep: string): Promise<void> {
  const large = `${'x'.repeat(9000)} ${marker} ${'y'.repeat(9000)}`
  for (let batch = 0; batch < 6; batch++) {
    const events = Array.from({length: 200}, (_, i) => {
      const n = batch * 200 + i
      return n % 50 === 7
        ? makeEvent({
            agent_id: 'bot',
            labels: {customer: 'c-7'},
            // A U+0000 keeps the event's exact text in PostgreSQL's `verbatim` column too.
            input: {prompt: n === 7 ? large : n === 57 ? `\u0000${marker}` : `${marker} ${n}`},
            output: [marker],
            metadata: {[marker]: true},
            error: `timeout ${marker}`,
          })
        : makeEvent({agent_id: 'bot', input: {prompt: `${keep} ${n}`}})
    })
    await services.ingest.recordBatch(events)
  }
}

describe('erased values are in no file of the data directory', function () {
  this.timeout(120_000)

  it('events.sqlite, its free pages, the journals and search.sqlite, before and after close', async () => {
    const dataDir = await tempDir()
    const marker = newMarker()
    const keep = newMarker()
    let services: AuditServices | undefined
    try {
      // Small snapshot thresholds: the marker is in several journal generations and a snapshot.
      services = await openAudit({dataDir, store: {snapshotEveryEvents: 300, snapshotIntervalMs: 0}})
      await seed(services, marker, keep)
      await services.store.prepareSearch()
      await services.store.snapshot()
      expect((await services.query.search({q: marker})).total).to.equal(24)
      expect(filesHolding(dataDir, marker)).to.include.members(['events.sqlite'])
      expect(await indexedTerms(dataDir)).to.include(marker)

      const result = await services.erasure.erase({filter: {labels: {customer: 'c-7'}}, reason: 'Art. 17'})
      expect(result.erased_events).to.equal(24)
      expect(filesHolding(dataDir, marker), 'right after the answer').to.deep.equal([])
      expect(await indexedTerms(dataDir)).to.not.include(marker)
      expect(await indexedTerms(dataDir)).to.include(keep)
      expect((await services.query.search({q: marker})).total).to.equal(0)
      expect((await services.query.search({q: keep})).total).to.equal(1176)
      await services.close()
      services = undefined
      expect(filesHolding(dataDir, marker), 'after close').to.deep.equal([])
      expect(filesHolding(dataDir, keep)).to.include('events.sqlite')
      const dump = execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), '.dump']).toString()
      expect(dump).to.include('audit-trail:erasures').and.not.include(marker)
    } finally {
      await services?.close()
      await removeDir(dataDir)
    }
  })

  it('on PostgreSQL, pg_dump after the erasure shows no erased value', async function () {
    if (!(await postgresAvailable())) {
      postgresSkips.count++
      return this.skip()
    }
    const dataDir = await tempDir()
    const database = await createTestDatabase()
    const marker = newMarker()
    const keep = newMarker()
    let services: AuditServices | undefined
    const dump = () => execFileSync('pg_dump', ['--dbname', database.url], {maxBuffer: 256 * 1024 * 1024}).toString()
    try {
      services = await openAudit({dataDir, databaseUrl: database.url})
      await seed(services, marker, keep)
      expect(dump()).to.include(marker)
      const result = await services.erasure.erase({filter: {labels: {customer: 'c-7'}}, reason: 'Art. 17'})
      expect(result.erased_events).to.equal(24)
      const after = dump()
      expect(after).to.not.include(marker)
      expect(after).to.include(keep)
      expect((await services.query.search({q: marker})).total).to.equal(0)
      expect(await services.integrity.verifyAll()).to.include({valid: true})
    } finally {
      await services?.close()
      await database.drop()
      await removeDir(dataDir)
    }
  })
})
