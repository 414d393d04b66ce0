/**
 * The stateless protocol revision 2026-07-28 (no initialize, no Mcp-Session-Id: every request
 * carries its protocol version, client and capabilities in `_meta`; `server/discover` names the
 * server), which the installed SDK does not speak yet: scripted clients and servers, over stdio and
 * Streamable HTTP (JSON and SSE answers), with a policy, a cancellation and an Authorization header.
 */
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {useTempDir} from '../support/hooks.js'
import {
  eventually,
  SCRIPTED_SERVER,
  startHttpProxy,
  startRawProxy,
  type Started,
  useSwitchableLog,
} from '../support/mcp.js'

const VERSION = '2026-07-28'
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN = '00f067aa0ba902b7'

function meta(extra: Record<string, unknown> = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientInfo': {name: 'stateless-agent', version: '3.1'},
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  }
}

const discoverResult = (name: string) => ({
  resultType: 'complete',
  supportedVersions: [VERSION],
  capabilities: {tools: {}},
  serverInfo: {name, version: '2.0'},
})

describe('mcp-proxy on the stateless protocol (2026-07-28)', function () {
  this.timeout(120_000)
  const log = useSwitchableLog()
  const state = useTempDir()

  it('over stdio: client and version from each request, server from server/discover, trace, cancellation', async () => {
    const script = path.join(state, 'script.json')
    const discover = `${JSON.stringify({jsonrpc: '2.0', id: 'd1', result: discoverResult('stateless-stdio')})}\n`
    const weather =
      '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"sun"}]}}\n'
    const late = '{"jsonrpc":"2.0","id":2,"result":{"content":[]}}\n'
    const third = '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"3"}]}}\n'
    await writeFile(script, JSON.stringify({on: {'"d1"': [discover], '1': [weather], '3': [late, third]}}))
    const received = path.join(state, 'received.bin')
    const proxy = startRawProxy(
      ['--server', log.url, '--state-dir', state],
      ['node', SCRIPTED_SERVER, script, received],
    )
    const send = (message: unknown) => proxy.send(`${JSON.stringify(message)}\n`)
    await send({jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: {_meta: meta()}})
    await proxy.until('"serverInfo"')
    const traceparent = `00-${TRACE}-${SPAN}-01`
    await send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {name: 'weather', arguments: {city: 'Oslo'}, _meta: meta({traceparent})},
    })
    await proxy.until('"sun"')
    await send({jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'slow', arguments: {}, _meta: meta()}})
    await send({jsonrpc: '2.0', method: 'notifications/cancelled', params: {requestId: 2, reason: 'user stop'}})
    await send({jsonrpc: '2.0', id: 3, method: 'tools/call', params: {name: 'third', arguments: {}, _meta: meta()}})
    await proxy.until('"text":"3"')
    expect(await proxy.end()).to.equal(0)
    expect(proxy.stdout().toString()).to.equal(discover + weather + late + third)
    expect(proxy.stderr()).to.not.match(/unknown request id 2/)

    const events = await eventually(async () => {
      const all = await log.events()
      expect(all).to.have.length(4)
      return all
    })
    expect(events.map((e) => [e.action_type, e.action_name, e.action_status])).to.deep.equal([
      ['MCP_REQUEST', 'server/discover', 'success'],
      ['TOOL_CALL', 'weather', 'success'],
      ['TOOL_CALL', 'slow', 'cancelled'],
      ['TOOL_CALL', 'third', 'success'],
    ])
    for (const event of events) {
      expect(event.agent_id).to.equal('stateless-agent')
      expect(event.labels).to.include({'mcp.protocol_version': VERSION, 'mcp.server': 'stateless-stdio'})
    }
    expect(events[1]).to.include({trace_id: TRACE, parent_id: SPAN})
    expect(events[2]!.error).to.equal('cancelled by the client: user stop')
  })

  describe('over Streamable HTTP', () => {
    let upstream: http.Server
    let upstreamUrl: string
    let proxy: Started & {url: string}
    const seen: Array<{headers: http.IncomingHttpHeaders; body: string}> = []

    /** A stateless server: each POST answered on its own, JSON or SSE; no session, no GET stream. */
    beforeEach(async () => {
      seen.length = 0
      upstream = http.createServer(async (req, res) => {
        if (req.method !== 'POST') return res.writeHead(405).end()
        let body = ''
        for await (const chunk of req) body += chunk
        seen.push({headers: req.headers, body})
        const message = JSON.parse(body)
        const answer = (result: unknown) => ({jsonrpc: '2.0', id: message.id, result})
        if (message.method === 'server/discover') {
          res.writeHead(200, {'content-type': 'application/json'})
          return res.end(JSON.stringify(answer(discoverResult('stateless-http'))))
        }
        const name = message.params?.name
        if (name === 'fail') {
          res.writeHead(200, {'content-type': 'application/json'})
          return res.end(
            JSON.stringify({jsonrpc: '2.0', id: message.id, error: {code: -32602, message: 'no such city'}}),
          )
        }
        res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'})
        const progress = {jsonrpc: '2.0', method: 'notifications/progress', params: {progressToken: 't', progress: 1}}
        res.write(`event: message\ndata: ${JSON.stringify(progress)}\n\n`)
        if (name === 'hang') return
        if (name === 'huge') {
          const text = 'h'.repeat(3 * 1024 * 1024)
          return res.end(`data: ${JSON.stringify(answer({content: [{type: 'text', text}]}))}\n\n`)
        }
        res.end(`event: message\ndata: ${JSON.stringify(answer({content: [{type: 'text', text: 'rain ☂'}]}))}\n\n`)
      })
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
      upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`
      const policy = path.join(state, 'policy.json')
      await writeFile(
        policy,
        JSON.stringify({policies: [{name: 'no-deletes', type: 'forbidden_action', match: {action_name: 'delete_*'}}]}),
      )
      const flags = ['--server', log.url, '--state-dir', state, '--policy', policy, '--max-message-bytes', '1MiB']
      proxy = await startHttpProxy(upstreamUrl, flags)
    })
    afterEach(async () => {
      await proxy.stop()
      upstream.closeAllConnections()
      await new Promise<void>((resolve) => upstream.close(() => resolve()))
    })

    const post = async (url: string, message: Record<string, unknown>, signal?: AbortSignal) => {
      const params = message.params as {name?: string} | undefined
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer sk-stateless-secret',
        'mcp-protocol-version': VERSION,
        'mcp-method': String(message.method),
      }
      if (params?.name) headers['mcp-name'] = params.name
      const response = await fetch(url, {method: 'POST', headers, body: JSON.stringify(message), signal})
      return {status: response.status, type: response.headers.get('content-type'), body: await response.text()}
    }
    const call = (id: number, name: string, extra: Record<string, unknown> = {}) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {name, arguments: {city: 'Bergen'}, _meta: meta(extra)},
    })

    it('answers as the server does, forwards Authorization without recording it, and refuses by policy', async () => {
      const conversation = [
        {jsonrpc: '2.0', id: 1, method: 'server/discover', params: {_meta: meta()}},
        call(2, 'weather', {traceparent: `00-${TRACE}-${SPAN}-01`}),
        call(3, 'fail'),
      ]
      const direct = []
      for (const message of conversation) direct.push(await post(upstreamUrl, message))
      seen.length = 0
      const proxied = []
      for (const message of conversation) proxied.push(await post(proxy.url, message))
      expect(proxied).to.deep.equal(direct)
      expect(proxied[1]!.type).to.equal('text/event-stream')
      expect(seen.map((s) => s.headers.authorization)).to.deep.equal(Array(3).fill('Bearer sk-stateless-secret'))
      expect(seen.map((s) => [s.headers['mcp-protocol-version'], s.headers['mcp-name']])).to.deep.equal([
        [VERSION, undefined],
        [VERSION, 'weather'],
        [VERSION, 'fail'],
      ])
      expect(seen.map((s) => s.body)).to.deep.equal(conversation.map((m) => JSON.stringify(m)))

      const refused = await post(proxy.url, call(4, 'delete_everything'))
      expect(refused.status).to.equal(200)
      const error = JSON.parse(refused.body)
      expect(error).to.deep.include({jsonrpc: '2.0', id: 4})
      expect(error.error.code).to.equal(-32010)
      expect(error.error.message).to.match(/refused by policy rule "no-deletes"/)
      expect(seen).to.have.length(3)

      const events = await eventually(async () => {
        const all = await log.events()
        expect(all).to.have.length(4)
        return all
      })
      expect(events.map((e) => [e.action_name, e.action_status])).to.deep.equal([
        ['server/discover', 'success'],
        ['weather', 'success'],
        ['fail', 'error'],
        ['delete_everything', 'denied'],
      ])
      expect(events[1]).to.include({trace_id: TRACE, parent_id: SPAN})
      expect(events[1]!.output).to.deep.equal({content: [{type: 'text', text: 'rain ☂'}]})
      for (const event of events) {
        expect(event.agent_id).to.equal('stateless-agent')
        expect(event).to.not.have.property('session_id')
        expect(event.labels).to.include({
          'mcp.protocol_version': VERSION,
          'mcp.server': 'stateless-http',
          'mcp.transport': 'streamable-http',
        })
      }
      expect(JSON.stringify(events)).to.not.include('sk-stateless-secret')
    })

    it('with a policy, refuses a request whose routing headers name another tool than its body', async () => {
      const headers = (name: string) => ({
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': name,
      })
      const body = JSON.stringify(call(5, 'delete_everything'))
      const spoofed = await fetch(proxy.url, {method: 'POST', headers: headers('weather'), body})
      expect(spoofed.status).to.equal(400)
      expect((await spoofed.json()).error).to.deep.include({code: -32600})
      const encoded = `=?base64?${Buffer.from('wéather').toString('base64')}?=`
      const honest = await fetch(proxy.url, {
        method: 'POST',
        headers: headers(encoded),
        body: JSON.stringify(call(6, 'wéather')),
      })
      expect(honest.status).to.equal(200)
      expect(seen.map((s) => JSON.parse(s.body).id)).to.deep.equal([6])
      const events = await eventually(async () => {
        const all = await log.events()
        expect(all).to.have.length(2)
        return all
      })
      expect(events.map((e) => [e.action_name, e.action_status])).to.deep.equal([
        ['delete_everything', 'denied'],
        ['wéather', 'success'],
      ])
      expect(events[0]!.metadata).to.deep.include({refused: {refused_by: 'routing_headers'}})
    })

    it('streams an answer larger than it observes through unchanged, and records its size', async () => {
      const direct = await post(upstreamUrl, call(8, 'huge'))
      const proxied = await post(proxy.url, call(8, 'huge'))
      expect(proxied.body === direct.body).to.equal(true)
      expect(proxied.body.length).to.be.above(3 * 1024 * 1024)
      const [event] = await eventually(async () => {
        const all = await log.events()
        expect(all).to.have.length(1)
        return all
      })
      expect(event).to.include({action_name: 'huge', action_status: 'success'})
      const result = direct.body
        .split('\n')
        .find((line) => line.includes('"result"'))!
        .slice('data: '.length)
      expect(event!.output).to.deep.include({omitted: true, size: Buffer.byteLength(result)})
      expect(proxy.stderr()).to.match(/the server sent a message of \d+ bytes, .*; relayed without being observed/)
    })

    it('records a request whose client went away before the answer as cancelled', async () => {
      const aborted = new AbortController()
      const response = await fetch(proxy.url, {
        method: 'POST',
        headers: {'content-type': 'application/json', accept: 'application/json, text/event-stream'},
        body: JSON.stringify(call(7, 'hang')),
        signal: aborted.signal,
      })
      const reader = response.body!.getReader()
      expect(new TextDecoder().decode((await reader.read()).value)).to.include('notifications/progress')
      aborted.abort()
      const [event] = await eventually(async () => {
        const all = await log.events()
        expect(all).to.have.length(1)
        return all
      })
      expect(event).to.include({action_name: 'hang', action_status: 'cancelled'})
    })
  })
})
