/**
 * `audit-trail mcp-proxy --listen --upstream` between the SDK's Streamable HTTP client and
 * server-everything's Streamable HTTP transport (the 2025-11-25 era: initialize, Mcp-Session-Id,
 * SSE streams carrying the server's own requests), and a client of the older 2025-03-26 revision.
 */
import {expect} from 'chai'
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import type {JSONRPCMessage} from '@modelcontextprotocol/sdk/types.js'
import {sha256Hex} from '../../src/core/crypto.js'
import {opened, useTempDir} from '../support/hooks.js'
import {
  eventually,
  newClient,
  startEverythingHttp,
  startHttpProxy,
  type Started,
  useSwitchableLog,
} from '../support/mcp.js'

/** The action_name each JSON-RPC request becomes: the tool for tools/call, else the method. */
function actionName(message: JSONRPCMessage): string | undefined {
  if (!('method' in message) || !('id' in message)) return undefined
  return message.method === 'tools/call' ? String((message.params as {name: string}).name) : message.method
}

/** Notes the requests sent each way through `transport` (after connect, for the incoming ones). */
function watchRequests(transport: Transport): {sent: string[]; received: string[]; start(): void} {
  const sent: string[] = []
  const received: string[] = []
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    const name = actionName(message)
    if (name) sent.push(name)
    return send(message, options)
  }
  return {
    sent,
    received,
    start() {
      const deliver = transport.onmessage!
      transport.onmessage = (message, extra) => {
        const name = actionName(message)
        if (name) received.push(name)
        deliver(message, extra)
      }
    },
  }
}

async function session(client: Client): Promise<unknown[]> {
  const progress: unknown[] = []
  return [
    (await client.listTools()).tools.map((t) => t.name).sort(),
    await client.callTool({name: 'echo', arguments: {message: 'ünïcode ✓'}}),
    await client.callTool({name: 'trigger-sampling-request', arguments: {prompt: 'a haiku', maxTokens: 20}}),
    await client.callTool({name: 'trigger-elicitation-request', arguments: {}}),
    await client.callTool({name: 'get-roots-list', arguments: {}}),
    await client.callTool({name: 'trigger-long-running-operation', arguments: {duration: 1, steps: 2}}, undefined, {
      onprogress: (p) => progress.push(p),
    }),
    progress,
    await client.callTool({name: 'no-such-tool', arguments: {}}),
  ]
}

describe('mcp-proxy over Streamable HTTP, with the SDK client and server-everything', function () {
  this.timeout(120_000)
  let proxy: (Started & {url: string}) | undefined
  // Declared first, so that the proxy stops before its upstream and its log.
  afterEach(async () => {
    await proxy?.stop()
    proxy = undefined
  })
  const log = useSwitchableLog()
  const state = useTempDir()
  const upstream = opened(startEverythingHttp, (server) => server.stop())

  it('relays JSON and SSE both ways as a direct connection, one event per request, no secret recorded', async () => {
    const capabilities = {sampling: {}, elicitation: {}, roots: {listChanged: true}}
    const token = 'Bearer sk-test-0123456789abcdef'
    const requestInit = {headers: {Authorization: token}}
    const direct = newClient('http-agent', capabilities)
    await direct.connect(new StreamableHTTPClientTransport(new URL(upstream.url), {requestInit}))
    const expected = await session(direct)
    await direct.close()

    proxy = await startHttpProxy(upstream.url, ['--server', log.url, '--state-dir', state])
    const client = newClient('http-agent', capabilities)
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), {requestInit})
    const seen = watchRequests(transport)
    await client.connect(transport)
    seen.start()
    expect(await session(client)).to.deep.equal(expected)
    const sessionId = transport.sessionId!
    await transport.terminateSession()
    await client.close()

    const events = await eventually(async () => {
      const all = (await log.events()).filter((e) => e.action_type !== 'TOOL_DEFINITIONS_CHANGED')
      expect(all.map((e) => e.action_name).sort()).to.deep.equal([...seen.sent, ...seen.received].sort())
      return all
    })
    expect(seen.received).to.include.members(['sampling/createMessage', 'elicitation/create', 'roots/list'])
    const status = (name: string) => events.filter((e) => e.action_name === name).map((e) => e.action_status)
    expect(status('echo')).to.deep.equal(['success'])
    expect(status('no-such-tool')).to.deep.equal(['error'])
    expect(status('sampling/createMessage')).to.deep.equal(['success'])
    for (const event of events) {
      expect(event.agent_id).to.equal('http-agent')
      expect(event.session_id).to.equal(sha256Hex(`mcp-session ${sessionId}`).slice(0, 32))
      expect(event.labels).to.include({'mcp.server': 'mcp-servers/everything', 'mcp.transport': 'streamable-http'})
    }
    const text = JSON.stringify(await log.events())
    expect(text).to.not.include('sk-test-0123456789abcdef')
    expect(text).to.not.include(sessionId)
  })

  it('serves a client of the 2025-03-26 revision as the server does', async () => {
    proxy = await startHttpProxy(upstream.url, ['--server', log.url, '--state-dir', state])
    const converse = async (url: string) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      }
      const post = async (message: unknown) => {
        const response = await fetch(url, {method: 'POST', headers, body: JSON.stringify(message)})
        const text = await response.text()
        const data = text.split('\n').filter((line) => line.startsWith('data: '))
        return {
          status: response.status,
          session: response.headers.get('mcp-session-id'),
          data: data.map((d) => d.slice(6)),
        }
      }
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {protocolVersion: '2025-03-26', capabilities: {}, clientInfo: {name: 'old-client', version: '0.1'}},
      })
      headers['mcp-session-id'] = init.session!
      headers['mcp-protocol-version'] = '2025-03-26'
      const initialized = await post({jsonrpc: '2.0', method: 'notifications/initialized'})
      const echo = await post({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {name: 'echo', arguments: {message: 'old'}},
      })
      await fetch(url, {method: 'DELETE', headers})
      return [init.status, JSON.parse(init.data[0]!).result.protocolVersion, initialized.status, echo.status, echo.data]
    }
    const expected = await converse(upstream.url)
    expect(expected[1]).to.equal('2025-03-26')
    expect(await converse(proxy.url)).to.deep.equal(expected)
    const events = await eventually(async () => {
      const all = await log.events()
      expect(all).to.have.length(2)
      return all
    })
    expect(
      events.map((e) => [e.action_name, e.action_status, e.agent_id, e.labels['mcp.protocol_version']]),
    ).to.deep.equal([
      ['initialize', 'success', 'old-client', '2025-03-26'],
      ['echo', 'success', 'old-client', '2025-03-26'],
    ])
  })
})
