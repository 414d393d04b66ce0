/**
 * The enforced capacity of the embedded store (docs/design.md): a warning once past its
 * warning level, then appends refused with storage_full before anything is written.
 */
import {expect} from 'chai'
import * as fs from 'node:fs'
import {AuditError} from '../../src/core/errors.js'
import {CAPACITY_ENV, capacityBytes, DEFAULT_CAPACITY_BYTES} from '../../src/store/sqljs/capacity.js'
import {openSqlJsStore} from '../../src/store/index.js'
import {listJournals} from '../../src/store/sqljs/journal.js'
import {EventMaker, removeDir, tempDir} from './support.js'

const CAPACITY = 256 * 1024

describe('sql.js store: capacity', () => {
  const dirs: string[] = []
  afterEach(() => {
    while (dirs.length > 0) removeDir(dirs.pop()!)
  })

  it('warns once past the warning level, refuses at capacity with storage_full, writes nothing of it', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const warnings: string[] = []
    const store = await openSqlJsStore({
      dataDir: dir,
      snapshotIntervalMs: 0,
      capacityBytes: CAPACITY,
      warn: (m) => warnings.push(m),
    })
    expect(store.storage()).to.include({backend: 'embedded', capacity_bytes: CAPACITY, state: 'ok'})
    const maker = new EventMaker()
    let refused: unknown
    for (let i = 0; i < 1000 && refused === undefined; i++) {
      await store
        .appendEvents(maker.many(10, () => ({input: {text: 'x'.repeat(200)}})))
        .catch((error: unknown) => (refused = error))
    }
    expect(refused).to.be.instanceOf(AuditError)
    expect((refused as AuditError).code).to.equal('storage_full')
    expect((refused as AuditError).status).to.equal(507)
    expect((refused as AuditError).message).to.match(
      /^nothing was recorded: .*audit-trail migrate --data-dir DIR --database-url postgres:/,
    )
    expect(warnings).to.have.length(1)
    expect(warnings[0]).to.match(/warning: the embedded store holds .* % of its 0\.3 MiB capacity/)
    const usage = store.storage()
    expect(usage.used_bytes).to.be.at.most(CAPACITY)
    expect(usage.state).to.be.oneOf(['warning', 'full'])
    expect((await store.stats('1970-01-01T00:00:00.000Z')).storage).to.deep.equal(usage)
    const stored = await store.count()
    const journalled = fs.statSync(listJournals(dir).at(-1)!.file).size
    // Still refused, still nothing written; a timestamp still fits (the reserve past the capacity).
    const same = new EventMaker(stored).many(10, () => ({agent_id: 'later', input: {text: 'x'.repeat(200)}}))
    const again = await store.appendEvents(same).catch((error: unknown) => error)
    expect(again).to.have.property('code', 'storage_full')
    expect(fs.statSync(listJournals(dir).at(-1)!.file).size).to.equal(journalled)
    await store.appendTimestamp({
      merkle_root: 'a'.repeat(64),
      tree_size: stored,
      timestamp: '2026-01-01T00:00:00.000Z',
      tsa: 'test',
      token: 'AA==',
    })
    await store.close()
    // Everything acknowledged opens again, and is still full.
    const reopened = await openSqlJsStore({
      dataDir: dir,
      snapshotIntervalMs: 0,
      capacityBytes: CAPACITY,
      warn: (m) => warnings.push(m),
    })
    expect(await reopened.count()).to.equal(stored)
    expect(await reopened.listTimestamps()).to.have.length(1)
    expect(warnings).to.have.length(2)
    // A larger capacity takes more again.
    await reopened.close()
    const larger = await openSqlJsStore({
      dataDir: dir,
      snapshotIntervalMs: 0,
      capacityBytes: 4 * CAPACITY,
      warn: () => undefined,
    })
    await larger.appendEvents(new EventMaker(stored).many(1, () => ({agent_id: 'later'})))
    expect(await larger.count()).to.equal(stored + 1)
    await larger.close()
  })

  it('takes the capacity from the option, then the environment, then the default, and refuses nonsense', () => {
    expect(capacityBytes(undefined, {})).to.equal(DEFAULT_CAPACITY_BYTES)
    expect(capacityBytes(1000, {[CAPACITY_ENV]: '5MiB'})).to.equal(1000)
    expect(capacityBytes(undefined, {[CAPACITY_ENV]: '5MiB'})).to.equal(5 * 1024 * 1024)
    expect(capacityBytes(undefined, {[CAPACITY_ENV]: '1.5GiB'})).to.equal(1.5 * 1024 ** 3)
    expect(capacityBytes(undefined, {[CAPACITY_ENV]: '123456'})).to.equal(123456)
    for (const bad of ['lots', '-1', '0', '5 TB', '4GiB']) {
      expect(() => capacityBytes(undefined, {[CAPACITY_ENV]: bad}), bad).to.throw(
        AuditError,
        /capacity|AUDIT_TRAIL_STORE_CAPACITY/,
      )
    }
  })
})
