/** `migrate` takes the forwarding positions along: a serve on the database goes on where the data directory stopped. */
import {expect} from 'chai'
import {openAudit} from '../../../src/services/audit.js'
import {migrateToPostgres} from '../../../src/services/migrate.js'
import {postgresPerTest} from '../../support/stores.js'

describe('migrate and forwarding positions', function () {
  this.timeout(60_000)
  const fresh = postgresPerTest()

  it('copies every stored position, with its last error, into the database', async () => {
    const services = await openAudit({dataDir: fresh.dir})
    await services.ingest.recordBatch([
      {agent_id: 'a', action_type: 'TOOL_CALL', action_name: 'x'},
      {agent_id: 'a', action_type: 'TOOL_CALL', action_name: 'y'},
    ])
    const stored = [
      {
        destination: 'd1',
        trail: 'default',
        url: 'https://h.example/',
        position: 2,
        updated_at: '2026-12-01T00:00:00.000Z',
      },
      {
        destination: 'd2',
        trail: 'default',
        url: 'syslog+tcp://s.example:514',
        position: 1,
        updated_at: '2026-12-01T00:00:01.000Z',
        last_error: 'syslog: cannot connect',
        last_error_at: '2026-12-01T00:00:01.000Z',
      },
    ]
    for (const position of stored) expect(await services.store.forwarding.save(position, 'test')).to.equal(true)
    await services.close()

    await migrateToPostgres({dataDir: fresh.dir, databaseUrl: fresh.url})
    const copy = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    try {
      expect(await copy.store.forwarding.list()).to.deep.equal(stored)
      // The lease migrate took is let go: a serve takes the destination at once.
      expect(await copy.store.forwarding.claim('d1', 'a serve', 5000)).to.equal(true)
    } finally {
      await copy.close()
    }
  })
})
