/**
 * The store's statements stay index lookups whatever the table's size was when they were first run,
 * and whatever the planner's statistics say (docs/postgres.md, Plans and Reads): counted in rows of
 * `events` read, as PostgreSQL's statistics report them.
 */
import {expect} from 'chai'
import pg from 'pg'
import {v7 as uuidv7} from 'uuid'
import {validateEvent, type SequenceRequest} from '../../src/core/event/index.js'
import {openPostgresStore, type PostgresStore} from '../../src/store/index.js'
import {makeEvent} from '../support/harness.js'
import {postgresPerTest, rowsOf} from '../support/stores.js'

const FILLER = 50_000

describe('PostgreSQL plans on a table that grew', function () {
  this.timeout(120_000)
  let store: PostgresStore | undefined
  const fresh = postgresPerTest(async () => {
    await store?.close()
    store = undefined
  })

  const sql = <R extends pg.QueryResultRow>(text: string) => rowsOf<R>(fresh.url, text)

  /**
   * FILLER rows at indexes far past the events recorded, holding none of the tests' words and labels,
   * about as wide as synthetic events (forty words, a few hundred bytes of input).
   */
  const fill = () =>
    sql(`INSERT INTO events ("index", id, agent_id, sequence, prev_hash, hash, action_type, action_name,
        action_status, "timestamp", recorded_at, labels, input, search)
      SELECT 1000000 + g, 'filler-' || g, 'filler', g, '', '', 'T', 'n', 's', '', '', '{"team": "filler"}',
        jsonb_build_object('text', repeat('filler ', 60)),
        (SELECT string_agg(format('w%s:%s', (g * 7 + k) % 5000, k), ' ') FROM generate_series(1, 40) AS k)::tsvector
      FROM generate_series(1, ${FILLER}) AS g`)

  /**
   * Rows of `events` read so far, by sequential scans only or (`all`) by any scan, once the store's
   * connections have reported them: a backend reports when idle, within a second (PostgreSQL 15).
   */
  async function rowsRead(all = false): Promise<number> {
    const column = all ? 'seq_tup_read + coalesce(idx_tup_fetch, 0)' : 'seq_tup_read'
    const read = async () =>
      Number((await sql<{n: string}>(`SELECT ${column} AS n FROM pg_stat_user_tables WHERE relname = 'events'`))[0]!.n)
    let last = await read()
    for (let i = 0; i < 12; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const now = await read()
      if (now === last && i >= 5) return now
      last = now
    }
    return last
  }

  const requests = (count: number, overrides: Record<string, unknown> = {}): SequenceRequest[] => {
    const now = new Date()
    return Array.from({length: count}, () => ({
      items: [validateEvent(makeEvent({id: uuidv7(), ...overrides}), {now, generateId: uuidv7})],
      recordedAt: now.toISOString(),
    }))
  }

  it('reads the ids of a retry by index after its first commits ran on a nearly empty table', async () => {
    // One connection: every statement of the store runs, and is planned, on it.
    store = await openPostgresStore({databaseUrl: fresh.url, maxConnections: 1})
    for (let i = 0; i < 12; i++) await store.recordEvents(requests(1))
    await fill()
    const before = await rowsRead()
    const result = await store.recordEvents(requests(500))
    expect(result.recorded).to.have.length(500)
    expect((await rowsRead()) - before).to.be.below(FILLER)
  })

  it('reads only the matches of a rare word or label, and counts them, with statistics or without', async () => {
    store = await openPostgresStore({databaseUrl: fresh.url})
    await store.recordEvents([
      ...requests(2, {labels: {team: 'rare'}, input: 'a rare word'}),
      ...requests(1, {input: 'rare'}),
    ])
    await fill()
    for (const analysed of [false, true]) {
      if (analysed) await sql('ANALYZE events')
      const before = await rowsRead(true)
      const found = await store.searchEvents({terms: ['rare']}, {limit: 20, offset: 0})
      const labelled = await store.queryEvents({labels: {team: 'rare'}}, {limit: 20, offset: 0})
      expect([found.total, found.items.length, labelled.total, labelled.items.length]).to.deep.equal([3, 3, 2, 2])
      expect((await rowsRead(true)) - before, analysed ? 'with statistics' : 'without').to.be.below(100)
    }
  })
})
