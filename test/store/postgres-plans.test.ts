/**
 * The sequencer's reads stay index lookups whatever the table's size was when the connection first
 * ran them (docs/postgres.md, "Plans"): a plan made for a young table is never kept for a grown one.
 */
import {expect} from 'chai'
import pg from 'pg'
import {v7 as uuidv7} from 'uuid'
import {validateEvent, type SequenceRequest} from '../../src/core/event/index.js'
import {openPostgresStore, type PostgresStore} from '../../src/store/index.js'
import {makeEvent} from '../support/harness.js'
import {postgresPerTest} from '../support/stores.js'

const FILLER = 50_000

describe('the PostgreSQL sequencer on a table that grew', function () {
  this.timeout(120_000)
  let store: PostgresStore | undefined
  const fresh = postgresPerTest(async () => {
    await store?.close()
    store = undefined
  })

  async function sql<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
    const client = new pg.Client({connectionString: fresh.url})
    await client.connect()
    try {
      return (await client.query<R>(text)).rows
    } finally {
      await client.end()
    }
  }

  /** Rows of `events` read by sequential scans so far, once the store's connection has reported them. */
  async function scannedRows(): Promise<number> {
    const read = async () =>
      Number(
        (await sql<{n: string}>("SELECT seq_tup_read AS n FROM pg_stat_user_tables WHERE relname = 'events'"))[0]!.n,
      )
    // A backend reports its counters when idle, within a second (PostgreSQL 15's pgstat_report_stat).
    let last = await read()
    for (let i = 0; i < 12; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const now = await read()
      if (now === last && i >= 5) return now
      last = now
    }
    return last
  }

  const requests = (count: number): SequenceRequest[] => {
    const now = new Date()
    return Array.from({length: count}, () => ({
      items: [validateEvent(makeEvent({id: uuidv7()}), {now, generateId: uuidv7})],
      recordedAt: now.toISOString(),
    }))
  }

  it('reads the ids of a retry by index after its first commits ran on a nearly empty table', async () => {
    // One connection: every statement of the store runs, and is planned, on it.
    store = await openPostgresStore({databaseUrl: fresh.url, maxConnections: 1})
    for (let i = 0; i < 12; i++) await store.recordEvents(requests(1))
    await sql(`INSERT INTO events ("index", id, agent_id, sequence, prev_hash, hash, action_type, action_name,
        action_status, "timestamp", recorded_at, labels, search)
      SELECT 1000000 + g, 'filler-' || g, 'filler', g, '', '', 'T', 'n', 's', '', '', '{}', ''
      FROM generate_series(1, ${FILLER}) AS g`)
    const before = await scannedRows()
    const result = await store.recordEvents(requests(500))
    expect(result.recorded).to.have.length(500)
    expect((await scannedRows()) - before).to.be.below(FILLER)
  })
})
