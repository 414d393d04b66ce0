/**
 * A data directory's chain scans read rows in a form of their own (src/store/sqljs/scan-row.ts):
 * hex and times are finished on the hashing thread. Whatever a row holds, the event decoded from it
 * must be the one every other read gives (EVENT_JSON and toEvent), or verification would judge
 * other content than the API shows. Checked over a real log's rows edited in every way a hand with
 * the sqlite3 CLI can.
 */
import {expect} from 'chai'
import {readFile} from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import initSqlJs, {type Database} from 'sql.js'
import {openAudit} from '../../src/services/audit.js'
import {toEvent} from '../../src/store/event-row.js'
import {EVENT_JSON} from '../../src/store/sqljs/schema.js'
import {isoTimes, SCAN_JSON, scanRowEvent} from '../../src/store/sqljs/scan-row.js'
import {removeDir, tempDir} from '../support/harness.js'

const FIRST_MS = Date.parse('0000-01-01T00:00:00.000Z')
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z')

/** Each row's text in one form, or the error reading it gives. */
function texts(db: Database, select: string): Array<string | Error> {
  const out: Array<string | Error> = []
  const indexes = db.exec('SELECT "index" FROM events ORDER BY "index"')[0]!.values.map(([index]) => index)
  for (const index of indexes) {
    try {
      out.push(String(db.exec(`SELECT ${select} FROM events WHERE "index" = ${index}`)[0]!.values[0]![0]))
    } catch (error) {
      out.push(error as Error)
    }
  }
  return out
}

describe('the rows of a chain scan (data directory)', function () {
  this.timeout(60_000)

  it('formats every time of years 0000 to 9999 as Date does, whichever day came before', () => {
    const format = isoTimes()
    fc.assert(
      fc.property(fc.array(fc.integer({min: FIRST_MS, max: LAST_MS}), {minLength: 1, maxLength: 20}), (times) => {
        for (const ms of times) expect(format(ms)).to.equal(new Date(ms).toISOString())
      }),
      {numRuns: 2_000},
    )
    for (const ms of [FIRST_MS, LAST_MS, -1, 0, 86_399_999, 86_400_000, Date.parse('2026-12-07T23:59:59.999Z')]) {
      expect(format(ms)).to.equal(new Date(ms).toISOString())
    }
  })

  it('decodes every row, as stored or edited by hand, to the event every other read gives', async () => {
    const dir = await tempDir()
    try {
      const services = await openAudit({dataDir: dir})
      for (let i = 0; i < 40; i++) {
        await services.ingest.recordOne({
          agent_id: `agent-${i % 2}`,
          action_type: 'TOOL_CALL',
          action_name: `step.${i}`,
          ...(i % 3 === 0 ? {input: {q: `query ${i}`}} : {}),
          output: {i},
          ...(i % 4 === 0 ? {metadata: {n: i}, error: 'late'} : {}),
          ...(i % 5 === 0 ? {session_id: `s-${i}`, duration_ms: i + 0.5} : {}),
        })
      }
      const erased: string[] = []
      for await (const event of services.store.scanEvents({fromIndex: 3, toIndex: 4})) erased.push(event.id)
      await services.erasure.erase({ids: erased, reason: 'test'})
      await services.close()

      const SQL = await initSqlJs()
      const db = new SQL.Database(await readFile(path.join(dir, 'events.sqlite')))
      // One edit a row, each a shape only a hand with the sqlite3 CLI gives.
      const edits = [
        `hash = upper(lower(hex(hash)))`,
        `hash = lower(hex(hash))`,
        `prev_hash = x'00ff10'`,
        `prev_hash = 42`,
        `hash = 1.5`,
        `timestamp = '2026-11-01T00:00:00Z'`,
        `timestamp = 1.5`,
        `timestamp = -1`,
        `timestamp = ${FIRST_MS}`,
        `timestamp = ${FIRST_MS - 1}`,
        `timestamp = ${LAST_MS}`,
        `timestamp = ${LAST_MS + 1}`,
        `timestamp = x'01'`,
        `timestamp = x'0102'`,
        `recorded_at = 'yesterday'`,
        `recorded_at = -62200000000000`,
        `salts = '{"output":"ab"}'`,
        `salts = 'not json'`,
        `salts = x'ff'`,
        `commitments = lower(hex(commitments))`,
        `commitments = upper(hex(commitments))`,
        `commitments = NULL`,
        `salts = 7`,
        `erased = 'not json'`,
      ]
      edits.forEach((edit, i) => db.run(`UPDATE events SET ${edit} WHERE "index" = ${i + 5}`))

      const api = texts(db, EVENT_JSON)
      const scan = texts(db, SCAN_JSON)
      expect(scan).to.have.length(41)
      expect(api.filter((text) => text instanceof Error)).to.have.length(1)
      for (let i = 0; i < api.length; i++) {
        const [a, s] = [api[i]!, scan[i]!]
        if (a instanceof Error) {
          expect(s, `row ${i}`).to.be.an('error')
          expect((s as Error).message).to.equal(a.message)
        } else {
          expect(scanRowEvent(s as string), `row ${i}`).to.deep.equal(toEvent(a))
        }
      }
      db.close()
    } finally {
      await removeDir(dir)
    }
  })
})
