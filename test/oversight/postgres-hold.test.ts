/**
 * A held call with the proxy on a PostgreSQL log (`mcp-proxy --database-url`): the decision is
 * made by another process of the same database and reaches the proxy through the database's
 * notifications (docs/oversight.md).
 */
import {expect} from 'chai'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {removeDir, tempDir} from '../support/harness.js'
import {connectStdio, eventually, SERVER_EVERYTHING} from '../support/mcp.js'
import {createTestDatabase, postgresAvailable} from '../support/stores.js'
import {holdingPolicy} from './support.js'

describe('mcp-proxy holding a call on a PostgreSQL log', function () {
  this.timeout(90_000)

  it('goes on when another process of the database approves', async function () {
    if (!(await postgresAvailable())) this.skip()
    const database = await createTestDatabase()
    const dir = await tempDir()
    let services: AuditServices | undefined
    try {
      const flags = ['--database-url', database.url, '--policy', await holdingPolicy(dir), '--state-dir', dir]
      const connection = await connectStdio([SERVER_EVERYTHING, 'stdio'], {proxy: flags, name: 'billing-bot'})
      try {
        services = await openAudit({dataDir: dir, databaseUrl: database.url})
        const call = connection.client.callTool({name: 'echo', arguments: {message: 'on postgres'}})
        const held = await eventually(async () => {
          const pending = await services!.approvals.list({state: 'pending'})
          expect(pending).to.have.length(1)
          return pending[0]!
        })
        await services.approvals.decide(held.id, {decision: 'approve'}, 'carol')
        const result = await call
        expect(JSON.stringify(result.content)).to.contain('on postgres')
      } finally {
        await connection.close()
      }
      const tool = await eventually(async () => {
        const {events} = await services!.query.listEvents({action_type: 'TOOL_CALL'})
        expect(events).to.have.length(1)
        return events[0]!
      })
      expect(tool.labels).to.include({'approval.decided_by': 'carol'})
    } finally {
      await services?.close()
      await database.drop()
      await removeDir(dir)
    }
  })
})
