/**
 * A held call in the stateless protocol revision (2026-07-28: no initialize, the client in every
 * request's `_meta`), over stdio with a scripted server, since the installed SDK does not speak it
 * yet: nothing reaches the server before the decision, and the call goes on once approved.
 */
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {useTempDir} from '../support/hooks.js'
import {eventually, SCRIPTED_SERVER, startRawProxy} from '../support/mcp.js'
import {holdingPolicy, useRestartableLog, WRITER} from './support.js'

const VERSION = '2026-07-28'
const meta = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': {name: 'stateless-agent', version: '3.1'},
  'io.modelcontextprotocol/clientCapabilities': {},
}

describe('mcp-proxy holding a call of the stateless protocol (2026-07-28)', function () {
  this.timeout(60_000)
  const log = useRestartableLog()
  const dir = useTempDir()

  it('forwards the call only once approved', async () => {
    const script = path.join(dir, 'script.json')
    const answer =
      '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}\n'
    await writeFile(script, JSON.stringify({on: {'1': [answer]}}))
    const received = path.join(dir, 'received.bin')
    await writeFile(received, '')
    const flags = ['--server', log.url, '--api-key', WRITER, '--policy', await holdingPolicy(dir), '--state-dir', dir]
    const proxy = startRawProxy(flags, ['node', SCRIPTED_SERVER, script, received])
    await proxy.send(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {name: 'echo', arguments: {message: 'stateless'}, _meta: meta},
      })}\n`,
    )
    const held = await eventually(async () => {
      const pending = await log.pending()
      expect(pending).to.have.length(1)
      return pending[0]!
    })
    expect(held).to.include({agent_id: 'stateless-agent', action_name: 'echo'})
    expect(await readFile(received, 'utf8')).to.equal('')
    expect(await log.decide(held.id, 'approve')).to.equal(201)
    await proxy.until('"text":"ok"')
    expect(await readFile(received, 'utf8')).to.contain('"stateless"')
    expect(await proxy.end()).to.equal(0)
    const call = await eventually(async () => {
      const found = (await log.events()).find((e) => e.action_type === 'TOOL_CALL')
      expect(found).to.not.equal(undefined)
      return found!
    })
    expect(call.labels).to.include({'mcp.protocol_version': VERSION, 'approval.id': held.id})
  })
})
