import path from 'node:path'
import {expect} from 'chai'
import {runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {forEachStore, storeFlags} from '../support/stores.js'

const EVENT = JSON.stringify({agent_id: 'billing-bot', action_type: 'TOOL_CALL', action_name: 'refund'})

describe('the CLI: trails create, list, seal and --trail', function () {
  this.timeout(120_000)

  forEachStore((store) => {
    const flagsOf = storeFlags(store)
    let dir: string
    let flags: string[]
    beforeEach(async () => {
      dir = await tempDir()
      flags = flagsOf(path.join(dir, 'data'))
    })
    afterEach(() => removeDir(dir))

    it('creates, lists and seals trails; --trail records into one and reads it alone', async () => {
      const created = await runCli(['trails', 'create', 'payments', '--origin', 'audit.example.com/payments', ...flags])
      expect(created.code, created.stderr).to.equal(0)
      expect(created.stdout).to.match(/^created trail payments\norigin +audit\.example\.com\/payments\n/)
      const ingested = await runCli(['ingest', '-', '--trail', 'payments', ...flags], {input: EVENT})
      expect(ingested.code, ingested.stderr).to.equal(0)
      const fromEnv = await runCli(['ingest', '-', ...flags], {input: EVENT, env: {AUDIT_TRAIL_TRAIL: 'payments'}})
      expect(fromEnv.code, fromEnv.stderr).to.equal(0)
      const root = JSON.parse((await runCli(['merkle', 'root', '--json', '--trail', 'payments', ...flags])).stdout)
      expect(root.tree_size).to.equal(2)
      expect(JSON.parse((await runCli(['merkle', 'root', '--json', ...flags])).stdout).tree_size).to.equal(0)
      const listed = await runCli(['trails', 'list', ...flags])
      expect(listed.stdout).to.match(/^NAME +TREE SIZE +STATE +ORIGIN\ndefault +0 +open +\S+\npayments +2 +open +audit/)
      const sealed = await runCli(['trails', 'seal', 'payments', ...flags])
      expect(sealed.stdout).to.equal('trail payments is sealed at tree size 2: its final checkpoint is signed\n')
      expect((await runCli(['trails', 'seal', 'payments', ...flags])).code).to.equal(0)
      const json = JSON.parse((await runCli(['trails', 'list', '--json', ...flags])).stdout)
      expect(json[1]).to.include({name: 'payments', origin: 'audit.example.com/payments', tree_size: 2, sealed: true})
      expect(json[1].verifier_key).to.match(/^audit\.example\.com\/payments\+[0-9a-f]{8}\+/)
      const refused = await runCli(['ingest', '-', '--trail', 'payments', ...flags], {input: EVENT})
      expect([refused.code, refused.stderr]).to.deep.equal([2, refused.stderr])
      expect(refused.stderr).to.include('trail payments is sealed')
      expect((await runCli(['verify', '--trail', 'payments', ...flags])).code).to.equal(0)
    })

    it('names an unknown trail (exit 2, trail_not_found with --json), a bad name and an existing one', async () => {
      expect((await runCli(['trails', 'create', 'q1', ...flags])).code).to.equal(0)
      const unknown = await runCli(['stats', '--trail', 'nothing', '--json', ...flags])
      expect(unknown.code).to.equal(2)
      expect(JSON.parse(unknown.stdout).error.code).to.equal('trail_not_found')
      expect(unknown.stderr).to.match(/^Error: no trail named nothing/)
      const bad = await runCli(['trails', 'create', 'Pay_ments', ...flags])
      expect(bad.code).to.equal(2)
      expect(bad.stderr).to.include('a trail name is 1 to 63 characters of a-z 0-9 and -')
      const again = await runCli(['trails', 'create', 'q1', '--json', ...flags])
      expect([again.code, JSON.parse(again.stdout).error.code]).to.deep.equal([2, 'conflict'])
      const misplaced = await runCli(['trails', 'seal', 'q1', '--trail', 'q1', ...flags])
      expect([misplaced.code, misplaced.stderr]).to.deep.equal([2, misplaced.stderr])
      expect(misplaced.stderr).to.include('--trail is for the data commands')
      expect((await runCli(['trails', 'seal', 'q2', ...flags])).code).to.equal(2)
      if (store === 'sqljs') {
        const elsewhere = await runCli(['trails', 'create', 'q3', '--in-database', 'postgres://x/y', ...flags])
        expect([elsewhere.code, elsewhere.stderr]).to.deep.equal([2, elsewhere.stderr])
        expect(elsewhere.stderr).to.include('--database-url')
      }
    })
  })
})
