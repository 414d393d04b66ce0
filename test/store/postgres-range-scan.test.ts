/**
 * The PostgreSQL chain check split by index range (range-scan.ts): whatever thread read and hashed a
 * range, the batches are exactly those of one thread's scan, in index order, tampered rows included.
 */
import {expect} from 'chai'
import {v7 as uuidv7} from 'uuid'
import {ChainVerifier} from '../../src/core/chain/index.js'
import {validateEvent} from '../../src/core/event/index.js'
import {AuditError} from '../../src/core/errors.js'
import {hashRows, type HashedBatch} from '../../src/store/hashed-scan.js'
import {openPostgresStore, type PostgresStore} from '../../src/store/index.js'
import {RANGE, rangeHashedBatches, rangesOf} from '../../src/store/postgres/range-scan.js'
import {EVENT_JSON} from '../../src/store/postgres/schema.js'
import {makeEvent} from '../support/harness.js'
import {postgresPerTest, rowsOf, TEST_DATABASE_URL} from '../support/stores.js'

const EVENTS = 2 * RANGE + 1234

async function collect(batches: AsyncIterable<HashedBatch>): Promise<HashedBatch> {
  const all: HashedBatch = {links: [], hashes: [], signatures: []}
  for await (const batch of batches) {
    all.links.push(...batch.links)
    all.hashes.push(...batch.hashes)
    all.signatures.push(...batch.signatures)
  }
  return all
}

describe('the PostgreSQL chain check split by index range', function () {
  this.timeout(180_000)
  let store: PostgresStore | undefined
  const fresh = postgresPerTest(async () => {
    await store?.close()
    store = undefined
  })

  const sql = (text: string) => rowsOf(fresh.url, text)

  it('cuts a stretch into ranges, the first from below 0 when it starts at the start', () => {
    expect(rangesOf(undefined, 2 * RANGE + 1)).to.deep.equal([
      {from: null, to: RANGE},
      {from: RANGE, to: 2 * RANGE},
      {from: 2 * RANGE, to: 2 * RANGE + 1},
    ])
    expect(rangesOf(RANGE + 7, RANGE + 9)).to.deep.equal([{from: RANGE + 7, to: RANGE + 9}])
    expect(rangesOf(0, 0)).to.deep.equal([])
  })

  it('gives every row below the end, hashed, in index order, as one thread does, tampering included', async () => {
    store = await openPostgresStore({databaseUrl: fresh.url})
    const now = new Date()
    for (let from = 0; from < EVENTS; from += 1000) {
      const count = Math.min(1000, EVENTS - from)
      await store.recordEvents(
        Array.from({length: count}, (_, i) => ({
          items: [
            validateEvent(makeEvent({agent_id: `agent-${(from + i) % 7}`, input: {n: from + i}}), {
              now,
              generateId: uuidv7,
            }),
          ],
          recordedAt: now.toISOString(),
        })),
      )
    }
    // Content changed in one row, a row moved under index -5, and one past the end asked for.
    await sql(`UPDATE events SET input = '{"n": "changed"}' WHERE "index" = ${RANGE + 3}`)
    await sql(`UPDATE events SET "index" = -5 WHERE "index" = ${2 * RANGE + 10}`)
    const end = EVENTS - 1
    const rows = await sql(`SELECT ${EVENT_JSON} AS row FROM events WHERE "index" < ${end} ORDER BY "index"`)
    const expected = hashRows(rows.map((r) => r.row as string))
    for (const threads of [1, 3]) {
      const split = await collect(rangeHashedBatches(fresh.url, undefined, end, threads))
      expect(split).to.deep.equal(expected)
    }
    expect(expected.links[0]!.index).to.equal(-5)
    const verdict = (batch: HashedBatch) => {
      const verifier = new ChainVerifier()
      verifier.addHashed(batch.links, batch.hashes)
      return verifier.summary()
    }
    expect(verdict(await collect(rangeHashedBatches(fresh.url, undefined, end, 2)))).to.deep.equal(verdict(expected))
    expect(verdict(expected).valid).to.equal(false)
    // From a later index: that stretch only.
    const later = await collect(rangeHashedBatches(fresh.url, RANGE, 2 * RANGE + 5, 2))
    expect(later.links.map((l) => l.index)).to.deep.equal(Array.from({length: RANGE + 5}, (_, i) => RANGE + i))
  })

  it('ends with storage_unavailable when a thread cannot read', async () => {
    const url = new URL(TEST_DATABASE_URL)
    url.pathname = '/atrail_no_such_database'
    let failure: unknown
    try {
      await collect(rangeHashedBatches(url.toString(), undefined, 10, 2))
    } catch (error) {
      failure = error
    }
    expect(failure).to.be.instanceOf(AuditError)
    expect((failure as AuditError).code).to.equal('storage_unavailable')
  })
})
