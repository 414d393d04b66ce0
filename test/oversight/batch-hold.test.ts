/**
 * A JSON-RPC batch (JSON-RPC 2.0 section 6, MCP 2025-03-26) with one held call, over stdio with a
 * scripted server: the batch waits for the decision (docs/oversight.md, Limits). Approved, it is
 * forwarded whole and its answer reaches the client; denied, nothing of it reaches the server and
 * each request gets its own error, the held one naming the rule and the decision.
 */
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {useTempDir} from '../support/hooks.js'
import {eventually, SCRIPTED_SERVER, startRawProxy, type RawClient} from '../support/mcp.js'
import {holdingPolicy, useRestartableLog, WRITER} from './support.js'

const line = (message: unknown) => `${JSON.stringify(message)}\n`
const call = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: {name, arguments: args},
})
const text = (id: number, value: string) => ({jsonrpc: '2.0', id, result: {content: [{type: 'text', text: value}]}})

const INITIALIZED = {
  jsonrpc: '2.0',
  id: 0,
  result: {protocolVersion: '2025-03-26', capabilities: {tools: {}}, serverInfo: {name: 'scripted', version: '1'}},
}
const BATCH = [call(1, 'echo', {message: 'refund 120 EUR'}), call(2, 'add', {a: 1, b: 2})]
const BATCH_ANSWER = [text(1, 'Echo: refund 120 EUR'), text(2, 'The sum of 1 and 2 is 3.')]

describe('mcp-proxy holding a call inside a JSON-RPC batch (stdio)', function () {
  this.timeout(60_000)
  let received: string
  let proxy: RawClient
  // Declared before the log and the directory, so that it runs before they are closed.
  afterEach(async () => {
    await proxy?.end()
  })
  const log = useRestartableLog()
  const dir = useTempDir()

  beforeEach(async () => {
    const script = path.join(dir, 'script.json')
    await writeFile(script, JSON.stringify({on: {'0': [line(INITIALIZED)], '1': [line(BATCH_ANSWER)]}}))
    received = path.join(dir, 'received.bin')
    await writeFile(received, '')
    const flags = ['--server', log.url, '--api-key', WRITER, '--policy', await holdingPolicy(dir), '--state-dir', dir]
    proxy = startRawProxy(flags, ['node', SCRIPTED_SERVER, script, received])
    await proxy.send(
      line({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {protocolVersion: '2025-03-26', capabilities: {}, clientInfo: {name: 'batch-agent', version: '1'}},
      }),
    )
    await proxy.until('"serverInfo"')
    await proxy.send(line({jsonrpc: '2.0', method: 'notifications/initialized'}))
    await proxy.send(line(BATCH))
  })

  async function heldOne() {
    const held = await eventually(async () => {
      const pending = await log.pending()
      expect(pending).to.have.length(1)
      return pending[0]!
    })
    expect(held).to.include({agent_id: 'batch-agent', action_name: 'echo'})
    expect(held.input).to.deep.equal({message: 'refund 120 EUR'})
    // Neither call of the batch has gone to the server, nor has the client had an answer.
    expect(await readFile(received, 'utf8')).to.not.contain('tools/call')
    expect(proxy.stdout().toString()).to.not.contain('"id":1')
    return held
  }

  /** The TOOL_CALL events of the batch, by action name, once both are recorded. */
  async function toolEvents() {
    return eventually(async () => {
      const calls = (await log.events()).filter((e) => e.action_type === 'TOOL_CALL')
      expect(calls).to.have.length(2)
      return Object.fromEntries(calls.map((e) => [e.action_name, e]))
    })
  }

  it('forwards the whole batch once its held call is approved; the approval marks only that call', async () => {
    const held = await heldOne()
    expect(await log.decide(held.id, 'approve', 'ticket 42')).to.equal(201)
    await proxy.until('The sum of 1 and 2 is 3.')
    const answer = proxy.stdout().toString().trim().split('\n').at(-1)!
    expect(JSON.parse(answer)).to.deep.equal(BATCH_ANSWER)
    expect(await readFile(received, 'utf8')).to.contain(JSON.stringify(BATCH))

    const {echo, add} = await toolEvents()
    expect(echo!.action_status).to.equal('success')
    expect(echo!.labels).to.include({'approval.id': held.id})
    expect(add!.action_status).to.equal('success')
    expect(add!.labels ?? {}).to.not.have.property('approval.id')
  })

  it('answers each request of the batch with an error once its held call is denied; the server gets none', async () => {
    const held = await heldOne()
    expect(await log.decide(held.id, 'deny', 'not today')).to.equal(201)
    await proxy.until('not today')
    const answer = JSON.parse(proxy.stdout().toString().trim().split('\n').at(-1)!)
    expect(answer).to.be.an('array').with.length(2)
    const [echo, add] = answer
    expect(echo.id).to.equal(1)
    expect(echo.error.message).to.equal(
      'held by policy rule "hold-echo" (forbidden_action) and denied by alice: not today',
    )
    expect(echo.error.data.audit_trail).to.include({rule: 'hold-echo', approval_id: held.id, decision: 'denied'})
    expect(add.id).to.equal(2)
    expect(add.error.message).to.equal(
      'not forwarded: another request of the same batch was held by policy rule "hold-echo" (forbidden_action) ' +
        'and denied by alice: not today',
    )
    expect(await readFile(received, 'utf8')).to.not.contain('tools/call')

    const events = await toolEvents()
    expect(events.echo!.action_status).to.equal('denied')
    expect(events.add!.action_status).to.equal('denied')
  })
})
