/**
 * `audit-trail approvals list | approve | deny` (docs/oversight.md) against a running server and
 * on a PostgreSQL store, and `serve --api-keys` refusing a key line with an unknown binding.
 */
import {randomUUID} from 'node:crypto'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {openAudit} from '../../src/services/audit.js'
import {runCli, startServe} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {createTestDatabase, postgresAvailable} from '../support/stores.js'
import {APPROVER, holdingPolicy, useRestartableLog, WRITER} from './support.js'

function heldCall() {
  return {
    agent_id: 'billing-bot',
    action_type: 'TOOL_CALL',
    action_name: 'payments.refund',
    call_event_id: randomUUID(),
    rule: 'hold-payments',
    rule_type: 'forbidden_action',
    input: {amount: 120},
  }
}

describe('audit-trail approvals', function () {
  this.timeout(120_000)

  describe('with --server', () => {
    const log = useRestartableLog('suite')
    const server = (key: string) => ['--server', log.url, '--api-key', key]

    it('lists pending calls, approves one as the key named alice, and refuses a second decision', async () => {
      const held = await log.services().approvals.request(heldCall())
      const listed = await runCli(['approvals', 'list', '--state', 'pending', '--json', ...server(WRITER)])
      expect(listed.code, listed.stderr).to.equal(0)
      expect(JSON.parse(listed.stdout).map((a: {id: string}) => a.id)).to.deep.equal([held.id])
      const table = await runCli(['approvals', 'list', ...server(WRITER)])
      expect(table.stdout).to.match(/pending\s+billing-bot\s+payments\.refund\s+hold-payments/)

      const approved = await runCli(['approvals', 'approve', held.id, '--reason', 'ticket 42', ...server(APPROVER)])
      expect(approved.code, approved.stderr).to.equal(0)
      expect(approved.stdout).to.contain(`approval ${held.id} (billing-bot: payments.refund) approved by alice`)

      const again = await runCli(['approvals', 'deny', held.id, ...server(APPROVER)])
      expect(again.code).to.equal(2)
      expect(again.stderr).to.match(/already approved by alice/)
    })

    it('refuses a decision without the approve scope and an unknown id, recording nothing', async () => {
      const held = await log.services().approvals.request(heldCall())
      const size = await log.services().store.count()
      const forbidden = await runCli(['approvals', 'deny', held.id, ...server(WRITER)])
      expect(forbidden.code).to.equal(2)
      expect(forbidden.stderr).to.match(/lacks the approve scope/)
      const unknown = await runCli(['approvals', 'approve', randomUUID(), ...server(APPROVER)])
      expect(unknown.code).to.equal(2)
      expect(unknown.stderr).to.match(/no approval/)
      expect(await log.services().store.count()).to.equal(size)
    })
  })

  it('decides on a PostgreSQL store directly, naming the account at the terminal', async function () {
    if (!(await postgresAvailable())) this.skip()
    const database = await createTestDatabase()
    try {
      const services = await openAudit({dataDir: '/nonexistent', databaseUrl: database.url})
      const held = await services.approvals.request(heldCall())
      await services.close()
      const denied = await runCli(['approvals', 'deny', held.id, '--reason', 'no', '--database-url', database.url])
      expect(denied.code, denied.stderr).to.equal(0)
      expect(denied.stdout).to.match(/denied by \S+@\S+/)
    } finally {
      await database.drop()
    }
  })

  it("serve names the keys that may decide and logs each decision by the key's name, never the key", async () => {
    const dir = await tempDir()
    const keys = path.join(dir, 'keys.txt')
    await writeFile(keys, `${WRITER} read,write\n${APPROVER} read,approve name=alice\n`)
    const serve = await startServe(['--data-dir', dir, '--api-keys', keys])
    try {
      const post = (url: string, key: string, body: unknown) =>
        fetch(`${serve.url}${url}`, {
          method: 'POST',
          headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
          body: JSON.stringify(body),
        }).then((r) => r.json())
      const held = await post('/v1/approvals', WRITER, heldCall())
      await post(`/v1/approvals/${held.id}`, APPROVER, {decision: 'deny', reason: 'no'})
      const deadline = Date.now() + 10_000
      while (!serve.output().includes(`approval ${held.id}`) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50))
      expect(serve.output()).to.contain('approve keys: alice')
      expect(serve.output()).to.contain(`audit-trail: approval ${held.id} denied by alice: no`)
      expect(serve.output()).to.not.contain(APPROVER)
    } finally {
      await serve.stop()
      await removeDir(dir)
    }
  })

  it('mcp-proxy refuses hold rules on a data directory, and a bad --hold-timeout (exit 2)', async () => {
    const dir = await tempDir()
    try {
      const policy = await holdingPolicy(dir)
      const proxy = (flags: string[]) =>
        runCli(['mcp-proxy', '--data-dir', dir, '--state-dir', dir, '--policy', policy, ...flags, '--', 'true'])
      const onDir = await proxy([])
      expect(onDir.code).to.equal(2)
      expect(onDir.stderr).to.match(/needs a log others can decide on: give --server URL/)
      const badTimeout = await proxy(['--hold-timeout', 'soon'])
      expect(badTimeout.code).to.equal(2)
      expect(badTimeout.stderr).to.match(/--hold-timeout soon: expected a duration/)
    } finally {
      await removeDir(dir)
    }
  })

  it('serve stops at a key line with an unknown binding, naming the line (exit 2)', async () => {
    const dir = await tempDir()
    try {
      const keys = path.join(dir, 'keys.txt')
      await writeFile(keys, `# keys\n${APPROVER} read,approve tenant=billing\n`)
      const serve = await runCli(['serve', '--data-dir', dir, '--port', '0', '--api-keys', keys])
      expect(serve.code).to.equal(2)
      expect(serve.stderr).to.match(/line 2: unknown binding 'tenant=billing'/)
    } finally {
      await removeDir(dir)
    }
  })
})
