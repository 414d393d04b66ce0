/**
 * `audit-trail mcp-proxy -- <server>` between the official SDK's Client and real MCP servers from
 * the registry, over stdio: the client sees what it sees without the proxy, and the log holds one
 * event per request with the right status (CONTRACT 11).
 */
import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {McpError} from '@modelcontextprotocol/sdk/types.js'
import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import type {StoredEvent} from '../../src/core/types.js'
import {removeDir, tempDir} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'
import {connectStdio, eventually, SERVER_EVERYTHING, SERVER_FILESYSTEM, useSwitchableLog} from '../support/mcp.js'

/** The same conversation with server-everything, whoever stands between. */
async function everythingSession(client: Client): Promise<unknown[]> {
  const tools = await client.listTools()
  const resources = await client.listResources()
  const prompts = await client.listPrompts()
  return [
    tools.tools.map((t) => t.name).sort(),
    await client.callTool({name: 'echo', arguments: {message: 'héllo 🌍 \u2028 "quoted" \\ back'}}),
    await client.callTool({name: 'get-sum', arguments: {a: 2, b: 40}}),
    await client.callTool({name: 'get-tiny-image', arguments: {}}),
    await client.callTool({name: 'get-structured-content', arguments: {location: 'Chicago'}}),
    await client.callTool({name: 'no-such-tool', arguments: {}}),
    await client.callTool({name: 'trigger-sampling-request', arguments: {prompt: 'a haiku', maxTokens: 20}}),
    resources.resources.slice(0, 3),
    await client.readResource({uri: resources.resources[0]!.uri}),
    prompts.prompts.map((p) => p.name).sort(),
    await client.getPrompt({name: 'simple-prompt'}),
    await client.ping(),
  ]
}

const summary = (events: StoredEvent[]) => events.map((e) => `${e.action_type} ${e.action_name} ${e.action_status}`)

describe('mcp-proxy over stdio, with the SDK client and real servers', function () {
  this.timeout(120_000)
  const log = useSwitchableLog()
  const state = useTempDir()

  it('server-everything: the client sees what it sees directly, and each request is one event', async () => {
    const capabilities = {sampling: {}}
    const direct = await connectStdio([SERVER_EVERYTHING, 'stdio'], {capabilities})
    const expected = await everythingSession(direct.client)
    await direct.close()

    const proxied = await connectStdio([SERVER_EVERYTHING, 'stdio'], {
      capabilities,
      name: 'claude-desktop',
      proxy: ['--server', log.url, '--state-dir', state],
    })
    expect(await everythingSession(proxied.client)).to.deep.equal(expected)
    await proxied.close()

    const events = await eventually(async () => {
      const all = await log.events()
      expect(all.filter((e) => e.action_name === 'ping')).to.have.length(1)
      return all
    })
    const calls = events.filter((e) => e.action_type !== 'TOOL_DEFINITIONS_CHANGED')
    expect(summary(calls)).to.deep.equal([
      'MCP_REQUEST initialize success',
      'MCP_REQUEST tools/list success',
      'MCP_REQUEST resources/list success',
      'MCP_REQUEST prompts/list success',
      'TOOL_CALL echo success',
      'TOOL_CALL get-sum success',
      'TOOL_CALL get-tiny-image success',
      'TOOL_CALL get-structured-content success',
      'TOOL_CALL no-such-tool error',
      'MCP_REQUEST sampling/createMessage success',
      'TOOL_CALL trigger-sampling-request success',
      'MCP_REQUEST resources/read success',
      'MCP_REQUEST prompts/get success',
      'MCP_REQUEST ping success',
    ])
    expect(events.filter((e) => e.action_type === 'TOOL_DEFINITIONS_CHANGED')).to.have.length(1)
    for (const event of events) {
      expect(event.agent_id).to.equal('claude-desktop')
      expect(event.labels).to.include({
        'mcp.server': 'mcp-servers/everything',
        'mcp.protocol_version': '2025-11-25',
        'mcp.transport': 'stdio',
      })
      expect(event.session_id).to.equal(events[0]!.session_id)
    }
    const echo = calls.find((e) => e.action_name === 'echo')!
    expect(echo.input).to.deep.equal({message: 'héllo 🌍 \u2028 "quoted" \\ back'})
    expect(echo.output).to.deep.equal(expected[1])
    expect(echo.duration_ms).to.be.a('number')
    const sampling = calls.find((e) => e.action_name === 'sampling/createMessage')!
    expect(sampling.labels['mcp.direction']).to.equal('server_to_client')
    expect(calls.find((e) => e.action_name === 'no-such-tool')!.error).to.match(/^the tool reported an error/)
  })

  it('server-filesystem: results as direct; a forbidden tool is refused, naming the rule, and denied', async () => {
    const root = await tempDir()
    try {
      await mkdir(path.join(root, 'docs'))
      await writeFile(path.join(root, 'docs', 'a.txt'), 'alpha\nβeta\n')
      const policy = path.join(state, 'policy.yaml')
      await writeFile(
        policy,
        [
          'policies:',
          '  - name: no-writes',
          '    type: forbidden_action',
          '    match: {action_type: TOOL_CALL, action_name: "write_*"}',
          '  - name: files-only-read',
          '    type: allowed_actions',
          '    match: [{action_type: MCP_REQUEST}, {action_name: "read_*"}, {action_name: "list_*"}]',
        ].join('\n'),
      )
      const session = async (client: Client) => [
        await client.callTool({name: 'list_allowed_directories', arguments: {}}),
        await client.callTool({name: 'list_directory', arguments: {path: path.join(root, 'docs')}}),
        await client.callTool({name: 'read_text_file', arguments: {path: path.join(root, 'docs', 'a.txt')}}),
      ]
      const direct = await connectStdio([SERVER_FILESYSTEM, root])
      const expected = await session(direct.client)
      await direct.close()

      const proxied = await connectStdio([SERVER_FILESYSTEM, root], {
        proxy: ['--server', log.url, '--state-dir', state, '--policy', policy, '--agent-id', 'docs-agent'],
      })
      expect(await session(proxied.client)).to.deep.equal(expected)
      const refusals: McpError[] = []
      for (const name of ['write_file', 'move_file']) {
        await proxied.client
          .callTool({name, arguments: {path: path.join(root, 'docs', 'b.txt'), content: 'x'}})
          .catch((error: McpError) => refusals.push(error))
      }
      await proxied.close()
      expect(refusals.map((e) => [e.code, e.message])).to.deep.equal([
        [
          -32010,
          'MCP error -32010: refused by policy rule "no-writes" (forbidden_action): TOOL_CALL write_file is forbidden',
        ],
        [
          -32010,
          'MCP error -32010: refused by policy rule "files-only-read" (allowed_actions): TOOL_CALL move_file is not ' +
            'among the allowed actions',
        ],
      ])
      expect(refusals[0]!.data).to.deep.equal({
        audit_trail: {refused_by: 'policy', rule: 'no-writes', rule_type: 'forbidden_action'},
      })
      expect(proxied.stderr()).to.match(/refused by policy rule "no-writes"/)

      const events = await eventually(async () => {
        const all = await log.events()
        expect(all.filter((e) => e.action_status === 'denied')).to.have.length(2)
        return all
      })
      expect(summary(events.filter((e) => e.action_type !== 'TOOL_DEFINITIONS_CHANGED'))).to.deep.equal([
        'MCP_REQUEST initialize success',
        'TOOL_CALL list_allowed_directories success',
        'TOOL_CALL list_directory success',
        'TOOL_CALL read_text_file success',
        'TOOL_CALL write_file denied',
        'TOOL_CALL move_file denied',
      ])
      const denied = events.find((e) => e.action_name === 'write_file')!
      expect(denied.agent_id).to.equal('docs-agent')
      expect(denied.metadata).to.deep.include({
        refused: {refused_by: 'policy', rule: 'no-writes', rule_type: 'forbidden_action'},
      })
      expect(denied.input).to.deep.equal({path: path.join(root, 'docs', 'b.txt'), content: 'x'})
    } finally {
      await removeDir(root)
    }
  })
})
