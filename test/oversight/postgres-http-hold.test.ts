/**
 * A held call through the Streamable HTTP relay (`mcp-proxy --listen --upstream`) on a PostgreSQL
 * log: the person decides with `approvals approve` / `approvals deny` in a process of its own on
 * the same database, and the decision reaches the proxy through the database (docs/oversight.md).
 */
import {expect} from 'chai'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {eventually, newClient, startEverythingHttp, startHttpProxy, type Started} from '../support/mcp.js'
import {createTestDatabase, postgresAvailable} from '../support/stores.js'
import {holdingPolicy} from './support.js'

describe('mcp-proxy --listen holding a call on a PostgreSQL log, decided by the CLI', function () {
  this.timeout(120_000)
  let database: {url: string; drop(): Promise<void>}
  let dir: string
  let upstream: Started & {url: string}
  let proxy: Started & {url: string}
  let client: Client
  let services: AuditServices

  beforeEach(async function () {
    if (!(await postgresAvailable())) this.skip()
    database = await createTestDatabase()
    dir = await tempDir()
    upstream = await startEverythingHttp()
    const flags = ['--database-url', database.url, '--policy', await holdingPolicy(dir), '--state-dir', dir]
    proxy = await startHttpProxy(upstream.url, flags)
    client = newClient('billing-bot')
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)))
    services = await openAudit({dataDir: dir, databaseUrl: database.url})
  })
  afterEach(async () => {
    if (!database) return
    await client?.close().catch(() => undefined)
    await proxy?.stop()
    await upstream?.stop()
    await services?.close()
    await database.drop()
    await removeDir(dir)
  })

  async function heldId(): Promise<string> {
    const held = await eventually(async () => {
      const pending = await services.approvals.list({state: 'pending'})
      expect(pending).to.have.length(1)
      return pending[0]!
    })
    expect(held).to.include({agent_id: 'billing-bot', action_name: 'echo'})
    return held.id
  }

  async function toolEvent() {
    return eventually(async () => {
      const {events} = await services.query.listEvents({action_type: 'TOOL_CALL'})
      expect(events).to.have.length(1)
      return events[0]!
    })
  }

  it('completes the call once `approvals approve --database-url` approves it', async () => {
    const call = client.callTool({name: 'echo', arguments: {message: 'refund 120 EUR'}})
    let answered = false
    void call.then(() => (answered = true)).catch(() => undefined)
    const id = await heldId()
    expect(answered, 'answered before the decision').to.equal(false)

    const approve = await runCli(['approvals', 'approve', id, '--database-url', database.url, '--reason', 'ticket 42'])
    expect(approve.code, approve.stderr).to.equal(0)

    const result = await call
    expect(JSON.stringify(result.content)).to.contain('refund 120 EUR')
    expect(result.isError ?? false).to.equal(false)
    const tool = await toolEvent()
    expect(tool.action_status).to.equal('success')
    expect(tool.labels).to.include({'approval.id': id})
    const [approval] = await services.approvals.list({})
    expect(approval).to.include({state: 'approved'})
  })

  it('answers the JSON-RPC error once `approvals deny --database-url` denies it, recorded denied', async () => {
    const call = client.callTool({name: 'echo', arguments: {message: 'wire 9000 EUR'}}).then(
      () => 'answered',
      (error: Error) => error.message,
    )
    const id = await heldId()
    const deny = await runCli(['approvals', 'deny', id, '--database-url', database.url, '--reason', 'too much'])
    expect(deny.code, deny.stderr).to.equal(0)

    const message = await call
    expect(message, message).to.match(/held by policy rule "hold-echo" \(forbidden_action\) and denied by .+: too much/)
    const tool = await toolEvent()
    expect(tool.action_status).to.equal('denied')
    expect(tool.output).to.equal(undefined)
  })
})
