/**
 * Held calls through `mcp-proxy` (docs/oversight.md) with the SDK client and server-everything:
 * approved over HTTP the call completes with the server's answer; denied it gets the JSON-RPC
 * error naming the rule and the reason; nobody deciding in time denies it by timeout; the events
 * come in the order request, decision, call, linked by parent_id and trace_id; and a held call
 * survives a restart of the service.
 */
import {expect} from 'chai'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {useTempDir} from '../support/hooks.js'
import {
  connectStdio,
  eventually,
  newClient,
  SERVER_EVERYTHING,
  startEverythingHttp,
  startHttpProxy,
  type Started,
} from '../support/mcp.js'
import {holdingPolicy, TRACEPARENT, useRestartableLog, WRITER, type RestartableLog} from './support.js'

function echo(client: Client, message: string, signal?: AbortSignal) {
  return client.callTool({name: 'echo', arguments: {message}, _meta: {traceparent: TRACEPARENT}}, undefined, {
    signal,
  })
}

async function heldOne(log: RestartableLog) {
  return eventually(async () => {
    const pending = await log.pending()
    expect(pending).to.have.length(1)
    return pending[0]!
  })
}

describe('mcp-proxy holding calls for approval', function () {
  this.timeout(120_000)
  const log = useRestartableLog()
  const dir = useTempDir()
  let flags: string[]
  beforeEach(async () => {
    flags = ['--server', log.url, '--api-key', WRITER, '--policy', await holdingPolicy(dir), '--state-dir', dir]
  })

  describe('over Streamable HTTP', () => {
    let upstream: Started & {url: string}
    let proxy: (Started & {url: string}) | undefined
    let client: Client
    beforeEach(async () => {
      upstream = await startEverythingHttp()
    })
    afterEach(async () => {
      await client?.close().catch(() => undefined)
      await proxy?.stop()
      await upstream.stop()
    })
    async function connect(extra: string[] = []) {
      proxy = await startHttpProxy(upstream.url, [...flags, ...extra])
      client = newClient('billing-bot')
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)))
    }

    it('forwards an approved call, which completes with the answer; events in order, linked', async () => {
      await connect()
      const call = echo(client, 'refund 120 EUR')
      const held = await heldOne(log)
      expect(held.input).to.deep.equal({message: 'refund 120 EUR'})
      expect(await log.decide(held.id, 'approve', 'ticket 42')).to.equal(201)
      const result = await call
      expect(JSON.stringify(result.content)).to.contain('refund 120 EUR')
      const events = await eventually(async () => {
        const all = await log.events()
        expect(all.some((e) => e.action_type === 'TOOL_CALL' && e.action_name === 'echo')).to.equal(true)
        return all
      })
      const request = events.find((e) => e.action_type === 'APPROVAL_REQUESTED')!
      const decision = events.find((e) => e.action_type === 'APPROVAL_GRANTED')!
      const tool = events.find((e) => e.action_type === 'TOOL_CALL' && e.action_name === 'echo')!
      expect(request.index).to.be.below(decision.index)
      expect(decision.index).to.be.below(tool.index)
      expect(request.parent_id).to.equal(tool.id)
      expect(decision.parent_id).to.equal(request.id)
      expect([request.trace_id, decision.trace_id, tool.trace_id]).to.deep.equal(
        Array(3).fill(TRACEPARENT.split('-')[1]),
      )
      expect(tool.labels).to.include({'approval.id': request.id, 'approval.decision': decision.id})
      expect(decision.labels).to.include({decided_by: 'alice', reason: 'ticket 42'})
      expect(tool.action_status).to.equal('success')
    })

    it('denies by timeout when nobody decides within --hold-timeout', async () => {
      await connect(['--hold-timeout', '1s'])
      const result = await echo(client, 'late').then(
        () => 'answered',
        (error: Error) => error.message,
      )
      expect(result, result).to.match(/held by policy rule "hold-echo".*denied by timeout/)
      const [approval] = await log.services().approvals.list({})
      expect(approval).to.include({state: 'timeout'})
      const tool = (await eventually(async () => {
        const found = (await log.events()).find((e) => e.action_type === 'TOOL_CALL')
        expect(found).to.not.equal(undefined)
        return found
      }))!
      expect(tool.action_status).to.equal('denied')
    })

    it('records a call the client cancels while held as cancelled, and closes its approval', async () => {
      await connect()
      const abort = new AbortController()
      const call = echo(client, 'never mind', abort.signal).catch((error: Error) => error)
      await heldOne(log)
      abort.abort('changed my mind')
      await call
      const [approval] = await eventually(async () => {
        const list = await log.services().approvals.list({state: 'cancelled'})
        expect(list).to.have.length(1)
        return list
      })
      expect(approval!.decision!.decided_by).to.equal('mcp-proxy')
      expect(await log.decide(approval!.id, 'approve')).to.equal(409)
    })

    it('a proxy stopped while holding answers with an error; one killed is cleaned up by its next run', async () => {
      await connect()
      const stopped = echo(client, 'stop').then(
        () => 'answered',
        (error: Error) => error.message,
      )
      await heldOne(log)
      await proxy!.stop()
      const stopText = await stopped
      expect(stopText, stopText).to.match(/"hold-echo" \(forbidden_action\); the proxy stopped before a decision$/)
      expect((await log.services().approvals.list({})).map((a) => a.state)).to.deep.equal(['abandoned'])
      await client.close()

      await connect()
      const killed = echo(client, 'killed').catch(() => undefined)
      await heldOne(log)
      proxy!.child.kill('SIGKILL')
      await killed
      await client.close().catch(() => undefined)
      await connect()
      const states = await eventually(async () => {
        const list = (await log.services().approvals.list({})).map((a) => a.state)
        expect(list).to.deep.equal(['abandoned', 'abandoned'])
        return list
      })
      expect(states).to.have.length(2)
    })

    it('keeps a held call decidable across a restart of the service', async () => {
      await connect()
      const call = echo(client, 'across a restart')
      const held = await heldOne(log)
      await log.restart()
      expect((await log.pending()).map((a) => a.id)).to.deep.equal([held.id])
      expect(await log.decide(held.id, 'approve')).to.equal(201)
      const result = await call
      expect(JSON.stringify(result.content)).to.contain('across a restart')
    })
  })

  it('over stdio: a denied call gets the JSON-RPC error naming the rule and the reason', async () => {
    const connection = await connectStdio([SERVER_EVERYTHING, 'stdio'], {proxy: flags, name: 'billing-bot'})
    try {
      const call = echo(connection.client, 'wire 1M').then(
        () => 'answered',
        (error: Error) => error.message,
      )
      const held = await heldOne(log)
      expect(await log.decide(held.id, 'deny', 'not on a Sunday')).to.equal(201)
      expect(await call).to.match(
        /held by policy rule "hold-echo" \(forbidden_action\) and denied by alice: not on a Sunday/,
      )
      const tool = await eventually(async () => {
        const found = (await log.events()).find((e) => e.action_type === 'TOOL_CALL')
        expect(found).to.not.equal(undefined)
        return found!
      })
      expect(tool.action_status).to.equal('denied')
      // Calls no rule holds go straight through.
      const tools = await connection.client.listTools()
      expect(tools.tools.map((t) => t.name)).to.include('echo')
    } finally {
      await connection.close()
    }
  })
})
