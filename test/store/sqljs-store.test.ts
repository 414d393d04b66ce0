import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import {AuditError} from '../../src/core/errors.js'
import type {StoredEvent} from '../../src/core/types.js'
import {fileOps, type FileOps} from '../../src/store/sqljs/file-ops.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {encodeRecord, listJournals} from '../../src/store/sqljs/journal.js'
import {LOCK_FILE} from '../../src/store/sqljs/lock.js'
import {EventMaker, removeDir, tempDir} from './support.js'

/**
 * The data directory as a process killed right now would leave it (its lock is then stale).
 * Journals are copied before the snapshot: a background snapshot may rename or delete files during
 * the copy, and in this order every mix still is a state some crash could leave.
 */
function crashCopy(dir: string): string {
  const copy = tempDir()
  const names = fs
    .readdirSync(dir)
    .filter((name) => name.startsWith('journal-'))
    .sort()
  for (const name of [...names, 'events.sqlite']) {
    try {
      fs.copyFileSync(path.join(dir, name), path.join(copy, name))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return copy
}

async function allEvents(store: SqlJsStore): Promise<StoredEvent[]> {
  const events: StoredEvent[] = []
  for await (const event of store.scanEvents()) events.push(event)
  return events
}

async function expectStorageError(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).to.be.instanceOf(AuditError)
  expect((error as AuditError).code).to.equal('storage_unavailable')
}

describe('sql.js store: durability', () => {
  const dirs: string[] = []
  const track = (dir: string) => (dirs.push(dir), dir)
  const open = (dataDir: string, options: {fileOps?: Partial<FileOps>; snapshotEveryEvents?: number} = {}) =>
    openSqlJsStore({dataDir, snapshotIntervalMs: 0, ...options})

  afterEach(() => {
    while (dirs.length > 0) removeDir(dirs.pop()!)
  })

  it('creates the data directory, writes a snapshot that the sqlite3 CLI reads, and reopens from it', async () => {
    const dir = path.join(track(tempDir()), 'nested', 'data')
    const maker = new EventMaker()
    const events = maker.many(20, (i) => ({labels: {n: String(i)}, input: i % 2 ? null : {i}}))
    const store = await open(dir)
    await store.appendEvents(events)
    await store.appendTimestamp({
      merkle_root: 'ab'.repeat(32),
      tree_size: 20,
      timestamp: '2026-01-01T00:00:00.000Z',
      tsa: 'embedded',
      token: 'AAAA',
    })
    await store.snapshot()
    const cli = spawnSync(
      'sqlite3',
      [
        path.join(dir, 'events.sqlite'),
        `select "index", id, agent_id, labels, input, duration_ms is null from events order by "index" limit 2; ` +
          `select count(*) from events; select tree_size from timestamps`,
      ],
      {encoding: 'utf8'},
    )
    expect(cli.stderr).to.equal('')
    expect(cli.stdout).to.equal(
      `0|${events[0]!.id}|agent-0|{"n":"0"}|{"i":0}|1\n1|${events[1]!.id}|agent-1|{"n":"1"}|null|1\n20\n20\n`,
    )
    await store.close()
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).to.equal(false)
    const again = await open(dir)
    expect(await allEvents(again)).to.deep.equal(events)
    expect(await again.listTimestamps()).to.have.length(1)
    await again.close()
  })

  it('replays journalled events that are not in the snapshot, ignoring and cutting a torn final line', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    const store = await open(dir)
    await store.appendEvents(maker.many(5))
    await store.close()
    const later = maker.many(3)
    const [journal] = listJournals(dir)
    const record = encodeRecord({events: later})
    fs.appendFileSync(journal!.file, Buffer.concat([record, record.subarray(0, 40)]))
    const reopened = await open(dir)
    expect((await allEvents(reopened)).map((e) => e.index)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7])
    expect(await reopened.getEvent(later[2]!.id)).to.deep.equal(later[2])
    await reopened.close()
    const third = await open(dir)
    expect(await third.count()).to.equal(8)
    await third.close()
  })

  it('loses no acknowledged event when the process dies at any point of ingest (disk copies)', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    const store = await open(dir, {snapshotEveryEvents: 7})
    const copies: {dir: string; acknowledged: number}[] = []
    for (let batch = 1; batch <= 12; batch++) {
      await store.appendEvents(maker.many((batch % 4) + 1))
      copies.push({dir: track(crashCopy(dir)), acknowledged: await store.count()})
    }
    await store.close()
    for (const copy of copies) {
      const recovered = await open(copy.dir)
      const indexes = (await allEvents(recovered)).map((e) => e.index)
      expect(indexes).to.deep.equal(Array.from({length: copy.acknowledged}, (_, i) => i))
      await recovered.close()
    }
  })

  it('keeps events that arrive while a snapshot is being written in the new journal', async () => {
    const dir = track(tempDir())
    let armed = false
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let writing!: () => void
    const started = new Promise<void>((resolve) => (writing = resolve))
    const ops: Partial<FileOps> = {
      rename: async (from, to) => {
        if (armed) {
          writing()
          await gate
        }
        return fileOps().rename(from, to)
      },
    }
    const maker = new EventMaker()
    const store = await open(dir, {fileOps: ops})
    await store.snapshot()
    await store.appendEvents(maker.many(3))
    armed = true
    const snapshotting = store.snapshot()
    await started
    await store.appendEvents(maker.many(4))
    // Dying now leaves the old snapshot, the journal it does not contain, and the new journal.
    const midway = track(crashCopy(dir))
    expect(listJournals(midway)).to.have.length(2)
    release()
    await snapshotting
    expect(listJournals(dir)).to.have.length(1)
    await store.appendEvents(maker.many(2))
    const recovered = await open(midway)
    expect((await allEvents(recovered)).map((e) => e.index)).to.deep.equal([0, 1, 2, 3, 4, 5, 6])
    await recovered.close()
    await store.close()
    const reopened = await open(dir)
    expect(await reopened.count()).to.equal(9)
    await reopened.close()
  })

  it('rejects with storage_unavailable when a journal write or fsync fails, shows none of it, recovers', async () => {
    const dir = track(tempDir())
    let fail: 'write' | 'fsync' | undefined
    const ops: Partial<FileOps> = {
      write: async (fd, data, position) => {
        if (fail === 'write') throw new Error('ENOSPC: injected')
        return fileOps().write(fd, data, position)
      },
      fsync: async (fd) => {
        if (fail === 'fsync') throw new Error('EIO: injected')
        return fileOps().fsync(fd)
      },
    }
    const maker = new EventMaker()
    const store = await open(dir, {fileOps: ops})
    await store.snapshot()
    const good = maker.many(3, () => ({action_name: 'kept'}))
    await store.appendEvents(good)
    for (const mode of ['write', 'fsync'] as const) {
      fail = mode
      const lost = new EventMaker(3).many(2, () => ({action_name: 'ghost', agent_id: 'ghost-agent'}))
      await expectStorageError(store.appendEvents(lost))
      expect(await store.count()).to.equal(3)
      expect(await store.getEvent(lost[0]!.id)).to.equal(undefined)
      expect((await store.searchEvents({terms: ['ghost']}, {limit: 10, offset: 0})).total).to.equal(0)
      expect((await store.queryEvents({agent_id: 'ghost-agent'}, {limit: 10, offset: 0})).total).to.equal(0)
      expect((await store.agentSummaries()).map((a) => a.agent_id)).not.to.include('ghost-agent')
    }
    fail = undefined
    const next = maker.many(2)
    await store.appendEvents(next)
    const copy = track(crashCopy(dir))
    await store.close()
    const recovered = await open(copy)
    expect(await allEvents(recovered)).to.deep.equal([...good, ...next])
    await recovered.close()
  })

  it('never replays a record whose journal write failed and whose truncation failed too', async () => {
    const dir = track(tempDir())
    const fault = {write: false, ftruncate: false}
    const ops: Partial<FileOps> = {
      // The bytes reach the file, then the call reports an error (EIO after a write), once.
      write: async (fd, data, position) => {
        const written = await fileOps().write(fd, data, position)
        if (fault.write) {
          fault.write = false
          throw new Error('EIO: injected write failure')
        }
        return written
      },
      ftruncate: async (fd, length) => {
        if (fault.ftruncate) throw new Error('EIO: injected ftruncate failure')
        return fileOps().ftruncate(fd, length)
      },
    }
    const maker = new EventMaker()
    const store = await open(dir, {fileOps: ops})
    await store.snapshot()
    const good = maker.many(2)
    await store.appendEvents(good)
    // The record is written whole, the write reports a failure, and cutting it off fails too.
    fault.write = true
    fault.ftruncate = true
    await expectStorageError(store.appendEvents(new EventMaker(2).many(2, () => ({action_name: 'refused'}))))
    const copy = track(crashCopy(dir))
    fault.ftruncate = false
    await store.close()
    const recovered = await open(copy)
    expect(await allEvents(recovered)).to.deep.equal(good)
    await recovered.appendEvents(new EventMaker(2).many(1))
    expect(await recovered.count()).to.equal(3)
    await recovered.close()
  })

  it('never replays a record whose insert failed when its truncation failed too', async () => {
    const dir = track(tempDir())
    let failTruncate = false
    const store = await open(dir, {
      fileOps: {
        ftruncate: async (fd, length) => {
          if (failTruncate) throw new Error('EIO: injected ftruncate failure')
          return fileOps().ftruncate(fd, length)
        },
      },
    })
    await store.snapshot()
    const maker = new EventMaker()
    const good = maker.many(3)
    await store.appendEvents(good)
    failTruncate = true
    // A caller bug the store only sees at insert time: an id that is already stored.
    const duplicate = new EventMaker(3).make({id: good[0]!.id})
    const error = await store.appendEvents([duplicate]).catch((e: unknown) => e)
    expect(error).to.be.instanceOf(AuditError)
    expect(await store.count()).to.equal(3)
    const copy = track(crashCopy(dir))
    // Appends go on from the same place, and a crash after them keeps them too.
    const next = new EventMaker(3).many(1, () => ({agent_id: 'other'}))
    await store.appendEvents(next)
    const later = track(crashCopy(dir))
    failTruncate = false
    await store.close()
    for (const [copyDir, expected] of [
      [copy, good],
      [later, [...good, ...next]],
    ] as const) {
      const recovered = await open(copyDir)
      expect(await allEvents(recovered)).to.deep.equal(expected)
      await recovered.close()
    }
  })

  it('undoes nothing after the commit: a failure there leaves no row without its journal record', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    const first = await open(dir)
    await first.appendEvents(maker.many(2))
    await first.close()
    // A hand-made trigger makes the store's own bookkeeping fail the first time recorded_at goes
    // back (the clock stepped back); the store must then either store the event or not at all.
    const sql =
      "CREATE TRIGGER refuse AFTER INSERT ON store_meta WHEN NEW.value = 'unordered' BEGIN SELECT RAISE(ABORT, " +
      "'refused'); END;"
    const cli = spawnSync('sqlite3', [path.join(dir, 'events.sqlite'), sql], {encoding: 'utf8'})
    expect(cli.stderr).to.equal('')
    const store = await open(dir)
    const back = maker.make({recorded_at: '2020-01-01T00:00:00.000Z'})
    const failed = await store.appendEvents([back]).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(failed).to.be.instanceOf(AuditError)
    expect(await store.count()).to.equal(2)
    expect(await store.getEvent(back.id)).to.equal(undefined)
    const next = new EventMaker(2).many(2, () => ({agent_id: 'later'}))
    await store.appendEvents(next)
    const copy = track(crashCopy(dir))
    await store.close()
    const recovered = await open(copy)
    expect((await allEvents(recovered)).map((e) => e.index)).to.deep.equal([0, 1, 2, 3])
    await recovered.close()
  })

  it('keeps working when a snapshot cannot be written, and keeps the journals it still needs', async () => {
    const dir = track(tempDir())
    let failRename = false
    const store = await open(dir, {
      fileOps: {
        rename: async (from, to) => {
          if (failRename) throw new Error('EIO: injected rename failure')
          return fileOps().rename(from, to)
        },
      },
    })
    await store.snapshot()
    const maker = new EventMaker()
    await store.appendEvents(maker.many(3))
    failRename = true
    await store.snapshot().then(
      () => expect.fail('snapshot should fail'),
      () => undefined,
    )
    await store.appendEvents(maker.many(2))
    const copy = track(crashCopy(dir))
    failRename = false
    await store.close()
    const recovered = await open(copy)
    expect(await recovered.count()).to.equal(5)
    await recovered.close()
  })

  it('takes snapshots less often as the database grows, so their total work stays linear', async () => {
    const dir = track(tempDir())
    const written: number[] = []
    const ops: Partial<FileOps> = {
      rename: async (from, to) => {
        if (to.endsWith('events.sqlite')) written.push(fs.statSync(from).size)
        return fileOps().rename(from, to)
      },
    }
    const store = await open(dir, {fileOps: ops, snapshotEveryEvents: 10})
    const maker = new EventMaker()
    for (let i = 0; i < 300; i++) {
      await store.appendEvents(maker.many(10))
      // Time for a background snapshot that became due to finish before the next append.
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await store.close()
    const final = fs.statSync(path.join(dir, 'events.sqlite')).size
    // A fixed threshold of 10 events would snapshot 300 times; a quarter of the log, about 25 times.
    expect(written.length).to.be.at.most(40)
    expect(written.reduce((a, b) => a + b, 0)).to.be.at.most(8 * final)
  })

  it('runs overlapping snapshot requests one after the other', async () => {
    const dir = track(tempDir())
    const maker = new EventMaker()
    const store = await open(dir, {snapshotEveryEvents: 2})
    const work: Promise<void>[] = []
    for (let i = 0; i < 6; i++) {
      work.push(store.appendEvents(maker.many(3)), store.snapshot())
    }
    await Promise.all(work)
    await store.close()
    const reopened = await open(dir)
    expect(await reopened.count()).to.equal(18)
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([])
    await reopened.close()
  })

  it('refuses every call once closed', async () => {
    const dir = track(tempDir())
    const store = await open(dir)
    await store.close()
    await store.close()
    await expectStorageError(store.count())
    await expectStorageError(store.appendEvents(new EventMaker().many(1)))
  })

  it('refuses events whose index is not the next one (a caller bug) without journalling them', async () => {
    const dir = track(tempDir())
    const store = await open(dir)
    const error = await store.appendEvents(new EventMaker(5).many(1)).catch((e: unknown) => e)
    expect(error).to.be.instanceOf(AuditError).with.property('code', 'internal_error')
    await store.appendEvents(new EventMaker().many(1))
    expect(await store.count()).to.equal(1)
    await store.close()
  })
})
