/**
 * A data directory and a database written before trails existed (fixtures/pre-trails, made by the
 * code of main at afa63ed) open as trail default, unchanged: the same origin, log key and root, and
 * the package, receipt and timestamp issued then still verify (docs/trails.md, Upgrading).
 */
import {cp, readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect} from 'chai'
import pg from 'pg'
import {runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {createTestDatabase, forEachStore} from '../support/stores.js'

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'pre-trails')

/** Loads the plain SQL dump into the empty database of `url` (psql's backslash commands left out). */
async function restore(url: string): Promise<void> {
  const sql = (await readFile(path.join(FIXTURES, 'postgres.sql'), 'utf8'))
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n')
  const client = new pg.Client({connectionString: url})
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

describe('data written before trails existed', function () {
  this.timeout(120_000)

  forEachStore((store) => {
    let dir: string
    let flags: string[]
    let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined
    const exported = path.join(FIXTURES, store === 'sqljs' ? 'data-dir-export' : 'postgres-export')
    const said = async (file: string) => JSON.parse(await readFile(path.join(exported, file), 'utf8'))

    beforeEach(async () => {
      dir = await tempDir()
      if (store === 'sqljs') {
        await cp(path.join(FIXTURES, 'data-dir'), path.join(dir, 'data'), {recursive: true})
        flags = ['--data-dir', path.join(dir, 'data')]
      } else {
        database = await createTestDatabase({empty: true})
        await restore(database.url)
        flags = ['--data-dir', path.join(dir, 'data'), '--database-url', database.url]
      }
    })
    afterEach(async () => {
      await database?.drop()
      database = undefined
      await removeDir(dir)
    })

    it('opens as trail default with the same origin, log key and root', async () => {
      const key = await runCli(['keys', 'log', '--json', ...flags])
      expect(key.code, key.stderr).to.equal(0)
      expect(JSON.parse(key.stdout)).to.deep.equal(await said('log-key.json'))
      const root = JSON.parse((await runCli(['merkle', 'root', '--json', ...flags])).stdout)
      const before = await said('merkle-root.json')
      expect([root.merkle_root, root.tree_size]).to.deep.equal([before.merkle_root, before.tree_size])
      const trails = JSON.parse((await runCli(['trails', 'list', '--json', ...flags])).stdout)
      expect(trails).to.deep.equal([
        {
          name: 'default',
          origin: (await said('log-key.json')).origin,
          verifier_key: (await said('log-key.json')).verifier_key,
          tree_size: before.tree_size,
          sealed: false,
        },
      ])
      expect((await runCli(['verify', ...flags])).code).to.equal(0)
      expect((await runCli(['timestamps', 'verify', ...flags])).code).to.equal(0)
    })

    it('still verifies the package and the receipt issued before, and goes on recording', async () => {
      const {verifier_key: logKey} = await said('log-key.json')
      const pkg = await runCli(['verify', '--package', path.join(exported, 'package.atrail.json'), '--log-key', logKey])
      expect(pkg.code, pkg.stderr + pkg.stdout).to.equal(0)
      const event = path.join(dir, 'event.json')
      const shown = await runCli(['events', 'get', '018f0000-0000-4000-8000-000000000003', '--json', ...flags])
      await writeFile(event, shown.stdout)
      const receipt = path.join(exported, 'receipt.cose')
      const checked = await runCli(['verify', '--receipt', receipt, '--event', event, '--log-key', logKey])
      expect(checked.code, checked.stderr).to.equal(0)
      const more = await runCli(['ingest', '-', ...flags], {
        input: JSON.stringify({agent_id: 'billing-agent', action_type: 'TOOL_CALL', action_name: 'after'}),
      })
      expect(more.code, more.stderr).to.equal(0)
      const chains = JSON.parse((await runCli(['verify', '--json', ...flags])).stdout)
      expect(chains).to.include({valid: true, events_checked: 7})
      const now = path.join(dir, 'now.atrail.json')
      expect((await runCli(['export', '-o', now, ...flags])).code).to.equal(0)
      expect((await runCli(['verify', '--package', now])).code).to.equal(0)
    })
  })
})
