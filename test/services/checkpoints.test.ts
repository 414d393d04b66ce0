import {execFileSync} from 'node:child_process'
import {readdir, rm, stat} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {parseVerifierKey} from '../../src/core/note/index.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

/** The attacker edits events.sqlite with the sqlite3 CLI and removes the journal that could restore it. */
async function tamper(dataDir: string, sql: string): Promise<void> {
  for (const file of await readdir(dataDir)) if (file.startsWith('journal')) await rm(path.join(dataDir, file))
  execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), sql])
}

describe('signed checkpoints', function () {
  this.timeout(60_000)
  let dataDir: string
  let services: AuditServices | undefined
  beforeEach(async () => {
    dataDir = await tempDir()
  })
  afterEach(async () => {
    await services?.close()
    services = undefined
    await removeDir(dataDir)
  })

  it('creates the log key once, mode 0600, with a default origin stable across restarts', async () => {
    services = await openAudit({dataDir})
    const first = await services.checkpoints.verifierKey()
    expect(parseVerifierKey(first).name).to.match(/^audit-trail\.invalid\/[0-9a-f]{16}$/)
    expect((await stat(path.join(dataDir, 'log', 'log.key'))).mode & 0o777).to.equal(0o600)
    await services.close()
    services = await openAudit({dataDir})
    expect(await services.checkpoints.verifierKey()).to.equal(first)
    await services.close()
    services = await openAudit({dataDir, origin: 'audit.example.com/log'})
    const named = parseVerifierKey(await services.checkpoints.verifierKey())
    expect(named.name).to.equal('audit.example.com/log')
    expect(named.publicKey.equals(parseVerifierKey(first).publicKey)).to.equal(true)
  })

  it('refuses an origin that cannot name a key', async () => {
    services = await openAudit({dataDir, origin: 'two words'})
    await services.checkpoints.identity().then(
      () => expect.fail('accepted'),
      (error) => expect(error.code).to.equal('validation_error'),
    )
  })

  it('keeps checkpoints across restarts and signs again only when the tree grew', async () => {
    services = await openAudit({dataDir})
    await services.ingest.recordBatch([makeEvent(), makeEvent()])
    expect((await services.checkpoints.signIfGrown())!.tree_size).to.equal(2)
    expect(await services.checkpoints.signIfGrown()).to.equal(undefined)
    await services.close()
    services = await openAudit({dataDir})
    expect(await services.checkpoints.signIfGrown()).to.equal(undefined)
    await services.ingest.recordBatch([makeEvent()])
    expect((await services.checkpoints.signIfGrown())!.tree_size).to.equal(3)
    expect((await services.store.listCheckpoints()).map((c) => c.tree_size)).to.deep.equal([2, 3])
  })

  describe('never signs a tree that does not extend the last signed checkpoint', () => {
    beforeEach(async () => {
      const seeding = await openAudit({dataDir})
      await seeding.ingest.recordBatch(Array.from({length: 6}, (_, i) => makeEvent({action_name: `step-${i}`})))
      await seeding.checkpoints.signIfGrown()
      await seeding.close()
    })

    const refuses = async (pattern: RegExp) => {
      services = await openAudit({dataDir})
      await services.ingest.recordBatch([makeEvent({action_name: 'after'})])
      const error = await services.checkpoints.signIfGrown().then(
        () => undefined,
        (e: unknown) => e as {code: string; message: string},
      )
      expect(error?.code).to.equal('conflict')
      expect(error?.message).to.match(pattern)
      expect((await services.store.listCheckpoints()).map((c) => c.tree_size)).to.deep.equal([6])
    }

    it('an event changed in storage', async () => {
      await tamper(dataDir, 'update events set action_name = \'other\' where "index" = 2')
      await refuses(/history was rewritten since the checkpoint of \S+ \(tree size 6\)/)
    })

    it('an event hash rewritten in storage', async () => {
      await tamper(dataDir, "update events set hash = '" + '0'.repeat(64) + '\' where "index" = 5')
      await refuses(/history was rewritten since the checkpoint of \S+ \(tree size 6\)/)
    })

    it('events removed from the end', async () => {
      await tamper(dataDir, 'delete from events where "index" >= 3')
      services = await openAudit({dataDir})
      const error = await services.checkpoints.signIfGrown().then(
        () => undefined,
        (e: unknown) => e as {code: string; message: string},
      )
      expect(error?.code).to.equal('conflict')
      expect(error?.message).to.match(/smaller than the signed tree of 6;/)
      expect(services.history.rewrites().map((r) => r.kind)).to.deep.equal(['checkpoint'])
    })

    it('while untouched storage signs on', async () => {
      services = await openAudit({dataDir})
      await services.ingest.recordBatch([makeEvent({action_name: 'after'})])
      expect((await services.checkpoints.signIfGrown())!.tree_size).to.equal(7)
    })
  })
})
