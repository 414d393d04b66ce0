/**
 * Signed history only extends (issue 24, item 1): after the stored events were rewritten while the
 * service was stopped, a new timestamp is refused instead of anchoring the altered tree; the
 * series check, /healthz and the CLI say so; `timestamps reset` is the explicit way to start over.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../src/core/errors.js'
import type {TimestampRecord} from '../../src/core/types.js'
import {REBUILD_AGGREGATES} from '../../src/store/sqljs/aggregates.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {openEmbeddedTsa} from '../../src/services/tsa/index.js'
import {startService} from '../../src/server/start.js'
import {verifyPackage} from '../../src/core/evidence/verify.js'
import {PassThrough} from 'node:stream'
import {runCli} from '../support/cli.js'
import {makeEvent, startTestApi} from '../support/harness.js'
import {useStore} from '../support/stores.js'

/** 12 events alternating between agents a and b, then a timestamp of the tree of 12. */
async function seed(dataDir: string): Promise<void> {
  const services = await openAudit({dataDir})
  await services.ingest.recordBatch(
    Array.from({length: 12}, (_, i) => makeEvent({agent_id: i % 2 ? 'b' : 'a', action_name: `step-${i}`})),
  )
  await services.timestamps.issue()
  await services.close()
}

/** The attacker edits events.sqlite with the sqlite3 CLI and removes the journal that could restore it. */
async function tamper(dataDir: string, sql: string): Promise<void> {
  for (const file of await readdir(dataDir)) if (file.startsWith('journal')) await rm(path.join(dataDir, file))
  execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), sql])
}

const SWAP_3_AND_4 =
  'update events set "index" = -1 where "index" = 3; update events set "index" = 3 where "index" = 4; ' +
  'update events set "index" = 4 where "index" = -1'
/** The last event removed and the agents table rebuilt to match: every chain verifies, the tree has 11 leaves. */
const TRUNCATE_TAIL = `delete from events where "index" = 11; ${REBUILD_AGGREGATES}`

async function refusal(promise: Promise<unknown>): Promise<AuditError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof AuditError) return error
    throw error
  }
  throw new Error('expected a refusal')
}

describe('signed history only extends', function () {
  this.timeout(60_000)
  let services: AuditServices | undefined
  const {dataDir} = useStore('sqljs', async () => {
    await services?.close()
    services = undefined
  })
  beforeEach(() => seed(dataDir))

  for (const [name, sql, size] of [
    ["two events' indexes swapped", SWAP_3_AND_4, 12],
    ['the tail truncated, heads rewritten', TRUNCATE_TAIL, 11],
  ] as const) {
    it(`${name}: a new timestamp is refused, nothing is stored, and the finding is kept`, async () => {
      await tamper(dataDir, sql)
      services = await openAudit({dataDir})
      // The chains alone do not show it: the signed tree is the only witness.
      expect((await services.integrity.verifyAll()).valid).to.equal(true)
      const error = await refusal(services.timestamps.issue())
      expect(error.code).to.equal('conflict')
      expect(error.message).to.match(
        new RegExp(`refusing to sign the tree of ${size} events: history was rewritten since the timestamp of `),
      )
      expect(error.message).to.include('timestamps reset --reason')
      expect(await services.timestamps.list()).to.have.length(1)
      expect(services.history.rewrites()).to.have.length(1)
      expect(services.history.rewrites()[0]!.statement.tree_size).to.equal(12)
      const check = await services.timestamps.verifyLatest()
      expect(check).to.include({valid: true, consistent: false, series_consistent: false, timestamps_checked: 1})
      expect(check.rewritten_since).to.equal((await services.timestamps.list())[0]!.timestamp)
    })
  }

  it('an export of the cut-short log carries the larger timestamp, and does not verify', async () => {
    await tamper(dataDir, TRUNCATE_TAIL)
    services = await openAudit({dataDir})
    const out = new PassThrough()
    let text = ''
    out.on('data', (chunk) => (text += chunk))
    await services.exporter.writePackage({}, out)
    const pkg = JSON.parse(text)
    expect(pkg.merkle.tree_size).to.equal(11)
    expect(pkg.timestamp).to.include({tree_size: 12})
    const result = await verifyPackage(pkg)
    expect(result.valid).to.equal(false)
    expect(result.failure).to.include({check: 'consistency'})
  })

  it('untouched history: timestamps keep extending, the series verifies, nothing is reported', async () => {
    services = await openAudit({dataDir})
    await services.ingest.recordBatch([makeEvent({agent_id: 'c'})])
    await services.timestamps.issue()
    const check = await services.timestamps.verifyLatest()
    expect(check).to.include({
      valid: true,
      consistent: true,
      series_consistent: true,
      timestamps_checked: 2,
      rewritten_since: null,
      series_error: '',
    })
    expect(check.last_reset).to.equal(null)
    expect(services.history.rewrites()).to.deep.equal([])
  })

  it('a timestamp an older version signed over the altered tree: the series check finds the rewrite', async () => {
    await tamper(dataDir, SWAP_3_AND_4)
    services = await openAudit({dataDir})
    // What the service signed before this check existed: a valid token over the altered root.
    const tsa = await openEmbeddedTsa(dataDir)
    const root = await services.tree.read((t, size) => t.rootAt(size))
    const issued = await tsa.timestamp(root)
    const record: TimestampRecord = {
      merkle_root: Buffer.from(root).toString('hex'),
      tree_size: 12,
      timestamp: issued.genTime.toISOString(),
      tsa: issued.tsaName,
      token: Buffer.from(issued.token).toString('base64'),
    }
    await services.store.appendTimestamp(record)
    const check = await services.timestamps.verifyLatest()
    // The latest alone looks fine; the first one of the series does not.
    expect(check).to.include({
      valid: true,
      consistent: true,
      current_root_matches: true,
      series_consistent: false,
      timestamps_checked: 2,
    })
    expect(check.rewritten_since).to.equal((await services.timestamps.list())[0]!.timestamp)
    expect(await refusal(services.timestamps.issue())).to.have.property('code', 'conflict')
  })

  it('timestamps reset: needs a reason, is refused while history is intact, then starts over durably', async () => {
    services = await openAudit({dataDir})
    expect(await refusal(services.timestamps.reset('  '))).to.have.property('code', 'validation_error')
    expect(await refusal(services.timestamps.reset('restored'))).to.have.property('code', 'conflict')
    await services.close()
    await tamper(dataDir, TRUNCATE_TAIL)
    services = await openAudit({dataDir})
    const reset = await services.timestamps.reset('restored from the backup of Monday')
    expect(reset).to.include({tree_size: 11, reset_reason: 'restored from the backup of Monday'})
    expect(services.history.rewrites()).to.deep.equal([])
    await services.ingest.recordBatch([makeEvent({agent_id: 'c'})])
    await services.timestamps.issue()
    await services.close()
    // The reset record outlives a restart (journal, then snapshot), and the timestamps before it stay listed.
    services = await openAudit({dataDir})
    const listed = await services.timestamps.list()
    expect(listed.map((t) => [t.tree_size, t.reset_reason])).to.deep.equal([
      [12, undefined],
      [11, 'restored from the backup of Monday'],
      [12, undefined],
    ])
    const check = await services.timestamps.verifyLatest()
    expect(check).to.include({valid: true, consistent: true, series_consistent: true, timestamps_checked: 2})
    expect(check.last_reset).to.deep.include({tree_size: 11, reason: 'restored from the backup of Monday'})
    await services.close()
    services = undefined
    const rows = execFileSync('sqlite3', [
      path.join(dataDir, 'events.sqlite'),
      'select reset_reason from timestamps where reset_reason is not null',
    ])
    expect(rows.toString().trim()).to.equal('restored from the backup of Monday')
  })

  it('over HTTP: 409 with the error body, /healthz degraded (still 200), reset restores ok', async () => {
    await tamper(dataDir, SWAP_3_AND_4)
    const api = await startTestApi({dataDir})
    try {
      expect((await api.request('GET', '/healthz')).body)
        .to.include({status: 'ok'})
        .and.not.have.property('history_rewritten')
      const refused = await api.request('POST', '/v1/timestamp')
      expect(refused.status).to.equal(409)
      expect(refused.body.error.code).to.equal('conflict')
      const health = await api.request('GET', '/healthz')
      expect(health.status).to.equal(200)
      expect(health.body.status).to.equal('degraded')
      expect(health.body.history_rewritten[0]).to.include({kind: 'timestamp', tree_size: 12})
      const verify = await api.request('GET', '/v1/timestamps/verify')
      expect(verify.body).to.include({series_consistent: false})
      expect((await api.request('POST', '/v1/timestamps/reset', {body: {}})).status).to.equal(400)
      const reset = await api.request('POST', '/v1/timestamps/reset', {body: {reason: 'restored'}})
      expect(reset.status).to.equal(201)
      expect(reset.body.reset_reason).to.equal('restored')
      expect((await api.request('GET', '/healthz')).body)
        .to.include({status: 'ok'})
        .and.not.have.property('history_rewritten')
      expect((await api.request('GET', '/v1/timestamps')).body[1]).to.include({reset_reason: 'restored'})
    } finally {
      await api.close()
    }
  })

  it('serve: found at start-up (/healthz degraded); each --timestamp-every period refused, none stored', async () => {
    await tamper(dataDir, TRUNCATE_TAIL)
    const refusals: unknown[] = []
    const service = await startService({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      timestampEveryMs: 100,
      onTimestampError: (error) => refusals.push(error),
    })
    try {
      const deadline = Date.now() + 30_000
      while (refusals.length < 2 || service.services.history.rewrites().length === 0) {
        if (Date.now() > deadline) throw new Error(`timed out: ${refusals.length} refusals`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(refusals.every((error) => error instanceof AuditError && error.code === 'conflict')).to.equal(true)
      expect(await service.services.timestamps.list()).to.have.length(1)
      expect((await (await fetch(`${service.url}/healthz`)).json()).status).to.equal('degraded')
    } finally {
      await service.close()
    }
  })

  it('the check is generic: any kind of signed statement, each kind remembered apart', async () => {
    services = await openAudit({dataDir})
    const root = Buffer.from(await services.tree.read((t) => t.rootAt(5))).toString('hex')
    const good = {kind: 'checkpoint', tree_size: 5, root, signed_at: '2026-11-26T00:00:00.000Z'}
    const forged = {...good, root: root.replace(/^./, (c) => (c === '0' ? '1' : '0'))}
    expect(await services.history.check('checkpoint', [good], 12)).to.equal(undefined)
    expect((await services.history.check('checkpoint', [good, forged], 12))?.statement).to.equal(forged)
    expect(await refusal(services.history.assertExtends('checkpoint', [forged], 12, 'start over'))).to.have.property(
      'code',
      'conflict',
    )
    // A larger signed tree than the one to sign is not extended by it either.
    expect(await services.history.check('other', [{...good, tree_size: 13}], 12)).to.not.equal(undefined)
    expect(services.history.rewrites().map((r) => r.kind)).to.deep.equal(['checkpoint', 'other'])
    await services.history.check('checkpoint', [good], 12)
    expect(services.history.rewrites().map((r) => r.kind)).to.deep.equal(['other'])
  })

  it('the CLI: timestamp exits 1, timestamps verify exits 1 naming the rewrite, reset then verify exit 0', async () => {
    await tamper(dataDir, SWAP_3_AND_4)
    const stamped = await runCli(['timestamp', '--data-dir', dataDir])
    expect(stamped.code).to.equal(1)
    expect(stamped.stderr).to.match(/history was rewritten since the timestamp of/)
    const verified = await runCli(['timestamps', 'verify', '--data-dir', dataDir])
    expect(verified.code).to.equal(1)
    expect(verified.stdout).to.match(/history was rewritten since the timestamp of/)
    const reset = await runCli(['timestamps', 'reset', '--data-dir', dataDir, '--reason', 'restored on purpose'])
    expect(reset.code, reset.stderr).to.equal(0)
    expect((await runCli(['timestamps', 'verify', '--data-dir', dataDir])).code).to.equal(0)
  })
})
