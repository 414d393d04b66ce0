/**
 * Where the proxy's events go and what happens when that log is away (CONTRACT 11): calls go on
 * and their events arrive later, in order, with their own times; with --require-log calls are
 * refused instead. Also the store flags, the exit code, signals and usage errors of the command.
 */
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {McpError} from '@modelcontextprotocol/sdk/types.js'
import {runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {
  connectStdio,
  eventually,
  SCRIPTED_SERVER,
  SERVER_EVERYTHING,
  startRawProxy,
  startSwitchableLog,
  type SwitchableLog,
} from '../support/mcp.js'
import {createTestDatabase, postgresAvailable} from '../support/stores.js'

describe('mcp-proxy: the log away, the stores, exit codes', function () {
  this.timeout(120_000)
  let log: SwitchableLog | undefined
  let state: string

  beforeEach(async () => {
    state = await tempDir()
  })
  afterEach(async () => {
    await log?.close()
    log = undefined
    await removeDir(state)
  })

  it('keeps calling while the log is away; the events arrive when it is back, in order, none lost', async () => {
    log = await startSwitchableLog({startDown: true})
    const connection = await connectStdio([SERVER_EVERYTHING, 'stdio'], {
      proxy: ['--server', log.url, '--state-dir', state],
    })
    for (let i = 0; i < 5; i++)
      expect(await connection.client.callTool({name: 'echo', arguments: {message: `m${i}`}})).to.deep.equal({
        content: [{type: 'text', text: `Echo: m${i}`}],
      })
    await eventually(async () => expect(connection.stderr()).to.match(/cannot record .*events wait in/))
    const back = new Date().toISOString()
    await log.up()
    const events = await eventually(async () => {
      const all = await log!.events()
      expect(all).to.have.length(6)
      return all
    }, 30_000)
    await connection.close()
    expect(events.map((e) => e.action_name)).to.deep.equal(['initialize', 'echo', 'echo', 'echo', 'echo', 'echo'])
    expect(events.slice(1).map((e) => (e.input as {message: string}).message)).to.deep.equal([
      'm0',
      'm1',
      'm2',
      'm3',
      'm4',
    ])
    // A request may start in the same millisecond as `back` is read: at or before it.
    for (const event of events) expect(event.timestamp <= back, event.timestamp).to.equal(true)
    expect(connection.stderr()).to.match(/records again; sending the \d+ queued event/)
    expect(await log.events()).to.have.length(6)
  })

  it('with --require-log refuses calls while the log cannot record them, and lets them go once it can', async () => {
    log = await startSwitchableLog({startDown: true})
    const connection = await connectStdio([SERVER_EVERYTHING, 'stdio'], {
      proxy: ['--server', log.url, '--state-dir', state, '--require-log'],
    })
    const refused = await connection.client.callTool({name: 'echo', arguments: {message: 'x'}}).catch((e) => e)
    expect(refused).to.be.instanceOf(McpError)
    expect((refused as McpError).code).to.equal(-32011)
    expect((refused as McpError).message).to.match(/the server at .* cannot record.*--require-log/)
    await log.up()
    const answer = await eventually(() => connection.client.callTool({name: 'echo', arguments: {message: 'y'}}))
    expect(answer).to.deep.equal({content: [{type: 'text', text: 'Echo: y'}]})
    await connection.close()
    const events = await eventually(async () => {
      const all = (await log!.events()).filter((e) => e.action_name === 'echo')
      expect(all.at(-1)?.action_status).to.equal('success')
      return all
    })
    expect(events[0]).to.deep.include({action_status: 'denied', metadata: events[0]!.metadata})
    expect(events[0]!.metadata).to.deep.include({refused: {refused_by: 'audit_log'}})
    expect(events.filter((e) => e.action_status === 'success')).to.have.length(1)
  })

  it('sends the API key, and keeps the events while the server refuses a wrong one', async () => {
    const key = 'mcp-proxy-test-key-0123456789'
    log = await startSwitchableLog({apiKeys: `${key} write\n`})
    const wrong = await connectStdio([SERVER_EVERYTHING, 'stdio'], {
      proxy: ['--server', log.url, '--api-key', 'not-the-key-0123456789', '--state-dir', state, '--flush-timeout', '1'],
    })
    await wrong.client.callTool({name: 'echo', arguments: {message: 'kept'}})
    await eventually(async () => expect(wrong.stderr()).to.match(/cannot record \(.*(key|unauthorized|Bearer).*\)/i))
    await wrong.close()
    expect(await log.events()).to.have.length(0)
    const right = await connectStdio([SERVER_EVERYTHING, 'stdio'], {
      proxy: ['--server', log.url, '--api-key', key, '--state-dir', state],
    })
    await right.client.callTool({name: 'echo', arguments: {message: 'sent'}})
    await right.close()
    // The events the wrong key could not send come first, sent by the next proxy of the same log.
    const events = await eventually(async () => {
      const all = (await log!.events()).filter((e) => e.action_name === 'echo')
      expect(all).to.have.length(2)
      return all
    })
    expect(events.map((e) => (e.input as {message: string}).message)).to.deep.equal(['kept', 'sent'])
  })

  it('records straight into a data directory, or a PostgreSQL database, when no server runs', async function () {
    const dataDir = path.join(state, 'data')
    const stdio = await connectStdio([SERVER_EVERYTHING, 'stdio'], {
      proxy: ['--data-dir', dataDir, '--state-dir', state],
    })
    await stdio.client.callTool({name: 'get-sum', arguments: {a: 1, b: 2}})
    await stdio.close()
    // The proxy may still be writing after its client closed: read until both events are there.
    await eventually(async () => {
      const result = await runCli(['events', 'list', '--data-dir', dataDir, '--json'])
      expect(result.code, result.stderr).to.equal(0)
      const listed = JSON.parse(result.stdout) as Array<{action_name: string}>
      expect(listed.map((e) => e.action_name)).to.deep.equal(['initialize', 'get-sum'])
    })

    if (!(await postgresAvailable())) return
    const database = await createTestDatabase()
    try {
      const pg = await connectStdio([SERVER_EVERYTHING, 'stdio'], {
        proxy: ['--database-url', database.url, '--data-dir', dataDir, '--state-dir', state],
      })
      await pg.client.callTool({name: 'echo', arguments: {message: 'pg'}})
      await pg.close()
      const rows = await eventually(async () => {
        const result = await runCli(['events', 'list', '--database-url', database.url, '--data-dir', dataDir, '--json'])
        const events = JSON.parse(result.stdout) as Array<{action_name: string}>
        expect(events).to.have.length(2)
        return events
      })
      expect(rows.map((e) => e.action_name)).to.deep.equal(['initialize', 'echo'])
    } finally {
      await database.drop()
    }
  })

  it("forwards SIGTERM to the server and exits with the server's code", async () => {
    const script = path.join(state, 'script.json')
    const hello = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}\n'
    await writeFile(script, JSON.stringify({sigterm: 42, start: [hello]}))
    const flags = ['--data-dir', path.join(state, 'data'), '--state-dir', state]
    const proxy = startRawProxy(flags, ['node', SCRIPTED_SERVER, script, path.join(state, 'received.bin')])
    // The server's first line has come through: the relay runs, and forwards signals.
    await proxy.until('"data":"up"')
    proxy.child.kill('SIGTERM')
    expect(await proxy.stop()).to.equal(42)
    const crashing = await runCli(['mcp-proxy', ...flags, '--', 'node', '-e', 'process.exit(5)'])
    expect(crashing.code).to.equal(5)
  })

  it('says what is wrong with its arguments in one sentence, exit 2', async () => {
    const flags = ['--data-dir', path.join(state, 'data'), '--state-dir', state]
    const none = await runCli(['mcp-proxy', ...flags])
    expect(none.code).to.equal(2)
    expect(none.stderr).to.match(/^Error: give the MCP server command after --/)
    const missing = await runCli(['mcp-proxy', ...flags, '--', 'no-such-mcp-server-command'])
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.match(/Error: cannot start no-such-mcp-server-command: spawn .*ENOENT/)
    const size = await runCli(['mcp-proxy', ...flags, '--record-limit', '2GiB', '--', 'node'])
    expect(size.code).to.equal(2)
    expect(size.stderr).to.match(/--record-limit 2GiB: expected a size/)
    const listen = await runCli(['mcp-proxy', ...flags, '--listen', 'nowhere', '--upstream', 'http://127.0.0.1:1/mcp'])
    expect(listen.code).to.equal(2)
    expect(listen.stderr).to.match(/--listen nowhere: expected HOST:PORT/)
    const policy = await runCli(['mcp-proxy', ...flags, '--policy', path.join(state, 'none.yaml'), '--', 'node'])
    expect(policy.code).to.equal(2)
    expect(policy.stderr).to.match(/cannot read the policy file/)
  })
})
