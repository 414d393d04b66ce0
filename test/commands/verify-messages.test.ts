/**
 * What `verify` says (docs/verification.md): the selection a package filtered by session names,
 * a disclosure that does not match (exit 1, named, never a crash), and a receipt of another leaf.
 */
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'

describe('verify: the selection, a disclosure that does not match, a receipt of another leaf', function () {
  this.timeout(180_000)
  let dir: string
  let data: string
  let ids: string[]

  before(async () => {
    dir = await tempDir()
    data = path.join(dir, 'data')
    const events = Array.from({length: 4}, (_, i) => ({
      agent_id: 'support-bot',
      action_type: 'TOOL_CALL',
      action_name: `step-${i}`,
      session_id: `s-${i % 2}`,
      input: {question: `q${i}`},
    }))
    const ingest = await runCli(['ingest', '--data-dir', data, '-'], {input: JSON.stringify(events)})
    expect(ingest.code, ingest.stderr).to.equal(0)
    const list = await runCli(['events', 'list', '--data-dir', data, '--json'])
    ids = (JSON.parse(list.stdout) as Array<{id: string}>).map((e) => e.id)
  })
  after(async () => {
    await removeDir(dir)
  })

  it('names the session filter of a package as its selection', async () => {
    const file = path.join(dir, 'session.atrail.json')
    const exported = await runCli(['export', '--data-dir', data, '--session-id', 's-1', '-o', file])
    expect(exported.code, exported.stderr).to.equal(0)
    const verified = await runCli(['verify', '--package', file])
    expect(verified.code, verified.stderr).to.equal(0)
    expect(verified.stdout).to.match(/selection: session_id = s-1 \(every event checked to be inside it/)
    expect(verified.stdout).to.not.match(/no filter/)
  })

  it('refuses a disclosure that does not match with exit 1, naming it', async () => {
    const file = path.join(dir, 'redacted.atrail.json')
    expect((await runCli(['export', '--data-dir', data, '--redact', 'input', '-o', file])).code).to.equal(0)
    const disclosure = path.join(dir, 'wrong.json')
    const wrong = {event_id: ids[0], member: 'input', value: {question: 'not q0'}, salt: '00'.repeat(32)}
    await writeFile(disclosure, JSON.stringify(wrong))
    const result = await runCli(['verify', '--package', file, '--disclosure', disclosure])
    expect(result.stderr).to.not.match(/Cannot read properties/)
    expect(result.code, result.stderr).to.equal(1)
    expect(result.stdout).to.match(/^✔? ?valid: 4 events/m)
    expect(result.stdout).to.match(new RegExp(`INVALID disclosure: input of event ${ids[0]} does not match`))
  })

  it('names the leaf a receipt of another event proves', async () => {
    const receipt = path.join(dir, 'receipt-1.cose')
    expect((await runCli(['receipt', ids[1]!, '-o', receipt, '--data-dir', data])).code).to.equal(0)
    const logKey = (await runCli(['keys', 'log', '--data-dir', data])).stdout.trim()
    const event = path.join(dir, 'event-2.json')
    await writeFile(event, (await runCli(['events', 'get', ids[2]!, '--data-dir', data, '--json'])).stdout)
    const result = await runCli(['verify', '--receipt', receipt, '--event', event, '--log-key', logKey])
    expect(result.code).to.equal(1)
    expect(result.stdout).to.match(new RegExp(`the receipt proves leaf 1, but event ${ids[2]} is leaf 2`))
  })
})
