import {expect} from 'chai'
import {validateEvent} from '../../../src/core/event/index.js'
import {callEvent, type CallRecord} from '../../../src/mcp/record/call-event.js'
import {recordValue} from '../../../src/mcp/record/recorded-value.js'
import {McpSession} from '../../../src/mcp/record/session.js'
import {parseTraceparent, traceOf} from '../../../src/mcp/record/trace-context.js'

const LIMIT = 1024

function session(agentId?: string) {
  const s = new McpSession({agentId, transport: 'stdio', server: {}, serverFallback: 'my-server', sessionId: 'run-1'})
  s.learnRequest('initialize', {protocolVersion: '2025-11-25', clientInfo: {name: 'claude-code', version: '2'}})
  s.learnResult('initialize', {protocolVersion: '2025-06-18', serverInfo: {name: 'files', version: '0.6.2'}})
  return s
}

function call(method: string, params: unknown, s = session()): CallRecord {
  return {
    direction: 'client',
    id: 7,
    method,
    params,
    startedAt: Date.parse('2026-03-01T10:00:00.000Z'),
    startedTick: 1000,
    context: s.contextFor(params, 'client'),
  }
}

/** The event must be one the service accepts as it is (CONTRACT 2.1). */
function accepted(body: Record<string, unknown>): Record<string, unknown> {
  validateEvent(body, {now: new Date(), generateId: () => '00000000-0000-4000-8000-000000000000'})
  return body
}

describe('callEvent (one event per MCP request and outcome, CONTRACT 11)', () => {
  it('records a tool call: TOOL_CALL, the tool name, its arguments and result, time and duration', () => {
    const params = {name: 'read_file', arguments: {path: '/srv/a.txt'}, _meta: {progressToken: 3}}
    const result = {content: [{type: 'text', text: 'hello'}]}
    const event = accepted(callEvent(call('tools/call', params), {kind: 'result', result}, 1012.3456, LIMIT))
    expect(event).to.include({
      agent_id: 'claude-code',
      action_type: 'TOOL_CALL',
      action_name: 'read_file',
      action_status: 'success',
      timestamp: '2026-03-01T10:00:00.000Z',
      duration_ms: 12.346,
      session_id: 'run-1',
    })
    expect(event.input).to.deep.equal({path: '/srv/a.txt'})
    expect(event.output).to.deep.equal(result)
    expect(event.labels).to.deep.equal({
      'mcp.server': 'files',
      'mcp.server_version': '0.6.2',
      'mcp.protocol_version': '2025-06-18',
      'mcp.transport': 'stdio',
      'mcp.direction': 'client_to_server',
      'mcp.client': 'claude-code',
    })
    expect(event.metadata).to.deep.equal({jsonrpc_id: 7, method: 'tools/call'})
    expect(event.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7/)
  })

  it('records any other request as MCP_REQUEST named by its method, params without _meta as input', () => {
    const event = accepted(
      callEvent(call('resources/read', {uri: 'file:///a', _meta: {x: 1}}), {kind: 'result', result: {}}, 1000, LIMIT),
    )
    expect(event).to.include({action_type: 'MCP_REQUEST', action_name: 'resources/read'})
    expect(event.input).to.deep.equal({uri: 'file:///a'})
    expect(
      accepted(callEvent(call('ping', undefined), {kind: 'result', result: {}}, 1000, LIMIT)),
    ).to.not.have.property('input')
  })

  it('gives the status of each outcome: error, isError, cancelled, denied, unanswered', () => {
    const params = {name: 'write_file', arguments: {}}
    const error = callEvent(
      call('tools/call', params),
      {kind: 'error', error: {code: -32602, message: 'bad'}},
      1000,
      LIMIT,
    )
    expect(accepted(error)).to.include({action_status: 'error', error: 'JSON-RPC error -32602: bad'})
    const toolError = {content: [{type: 'text', text: 'disk full'}], isError: true}
    expect(
      accepted(callEvent(call('tools/call', params), {kind: 'result', result: toolError}, 1000, LIMIT)),
    ).to.include({
      action_status: 'error',
      error: 'the tool reported an error: disk full',
    })
    const cancelled = callEvent(call('tools/call', params), {kind: 'cancelled', reason: 'user stop'}, 1000, LIMIT)
    expect(accepted(cancelled)).to.include({action_status: 'cancelled', error: 'cancelled by the client: user stop'})
    const refusal = {refused_by: 'policy', rule: 'no-writes', rule_type: 'forbidden_action'}
    const denied = callEvent(call('tools/call', params), {kind: 'denied', message: 'refused', refusal}, 1000, LIMIT)
    expect(accepted(denied)).to.include({action_status: 'denied', error: 'refused'})
    expect((denied.metadata as Record<string, unknown>).refused).to.deep.equal(refusal)
    const lost = callEvent(call('tools/call', params), {kind: 'unanswered', reason: 'the server exited'}, 1000, LIMIT)
    expect(accepted(lost)).to.include({action_status: 'error', error: 'no response: the server exited'})
  })

  it('makes an acceptable event of hostile names and ids: control characters, lone surrogates, any length', () => {
    const s = new McpSession({transport: 'stdio', server: {name: 'srv\n\ud800'}, serverFallback: 'x'})
    s.learnRequest('initialize', {clientInfo: {name: `bot\u0007${'n'.repeat(500)}`}})
    const params = {name: `rm -rf\r\n\udc00${'z'.repeat(400)}`, arguments: {}}
    const hostile: CallRecord = {...call('tools/call', params, s), id: `\ud83d${'i'.repeat(5000)}`}
    const event = accepted(callEvent(hostile, {kind: 'result', result: {}}, 1000, LIMIT))
    expect(event.agent_id).to.have.length(256)
    expect(event.action_name).to.match(/^rm -rf {2}\ufffdz+$/)
    expect((event.labels as Record<string, string>)['mcp.server']).to.equal('srv \ufffd')
    expect((event.metadata as {jsonrpc_id: string}).jsonrpc_id).to.have.length(256)
  })

  it('takes trace_id and parent_id from a W3C traceparent in _meta', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const event = callEvent(
      call('tools/call', {name: 't', _meta: {traceparent}}),
      {kind: 'result', result: {}},
      1000,
      LIMIT,
    )
    expect(event).to.include({trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', parent_id: '00f067aa0ba902b7'})
  })

  it('records a result past the limit as its size and SHA-256, and says so', () => {
    const result = {content: [{type: 'text', text: 'x'.repeat(5000)}]}
    const event = accepted(callEvent(call('tools/call', {name: 'big'}), {kind: 'result', result}, 1000, LIMIT))
    const output = event.output as Record<string, unknown>
    // The RFC 8785 form sorts the keys: "text" before "type".
    const text = `{"content":[{"text":"${'x'.repeat(5000)}","type":"text"}]}`
    expect(output).to.include({omitted: true, size: Buffer.byteLength(text)})
    expect(output.sha256).to.match(/^[0-9a-f]{64}$/)
    expect(output.preview).to.equal(text.slice(0, 1024))
    expect((event.metadata as {omitted: string[]}).omitted).to.deep.equal(['output'])
  })

  it('uses --agent-id over the client name, and the stateless era _meta over the session', () => {
    const stateless = new McpSession({transport: 'streamable-http', server: {}, serverFallback: 'host:1'})
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': {name: 'agent-x', version: '1'},
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    const context = stateless.contextFor({name: 't', _meta: meta}, 'client')
    expect(context.agentId).to.equal('agent-x')
    expect(context.labels).to.include({'mcp.protocol_version': '2026-07-28', 'mcp.server': 'host:1'})
    expect(session('billing-bot').contextFor({}, 'client').agentId).to.equal('billing-bot')
    expect(
      new McpSession({transport: 'stdio', server: {}, serverFallback: 's'}).contextFor({}, 'client').agentId,
    ).to.equal('mcp-client')
  })
})

describe('recordValue (the record limit)', () => {
  it('digests the RFC 8785 form: key order and whitespace do not matter', () => {
    // printf '%s' '{"a":"é","b":1}' | sha256sum
    const expected = 'aa58fba8483623bed37c1b02edfccbdd9a53123837c20bfa4cb4049993a2872e'
    const recorded = recordValue(JSON.parse('{ "b" : 1, "a" : "é" }'), 4)
    expect(recorded.omitted).to.include({sha256: expected, size: 16})
  })

  it('keeps a value at the limit whole, and one that cannot be JSON is named, not sent', () => {
    expect(recordValue({a: 'é'}, 10)).to.deep.equal({value: {a: 'é'}})
    expect(recordValue({a: 'é'}, 9).omitted).to.include({size: 10})
    expect(recordValue({t: '\ud800'}, 100).omitted?.reason).to.match(/unpaired surrogate/)
  })
})

describe('parseTraceparent (W3C Trace Context 3.2)', () => {
  it('accepts a version 00 value and one of a later version with more fields', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).to.deep.equal({
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      parent_id: '00f067aa0ba902b7',
    })
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra')).to.not.equal(undefined)
  })

  it('ignores all-zero ids, version ff, upper case, extra fields on 00, and non-strings', () => {
    for (const bad of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      42,
    ])
      expect(parseTraceparent(bad), String(bad)).to.equal(undefined)
    expect(traceOf([1, 2])).to.equal(undefined)
  })
})
