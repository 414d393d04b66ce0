import {expect} from 'chai'
import {spawn} from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import {openSqlJsStore, StoreError, type SqlJsStore} from '../../src/store/index.js'
import {LOCK_FILE} from '../../src/store/sqljs/lock.js'
import {EventMaker, removeDir, spawnFixture, tempDir, waitForExit, waitForLine} from './support.js'

/** The pid the lock file of `dir` names. */
function lockPid(dir: string): number {
  return (JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as {pid: number}).pid
}

describe('sql.js store across processes', function () {
  this.timeout(30_000)
  let dir: string

  beforeEach(() => {
    dir = tempDir()
  })

  afterEach(() => removeDir(dir))

  it('keeps every acknowledged event when the writer is killed with SIGKILL mid-ingest, twice', async () => {
    let acknowledged = 0
    for (const target of [1500, 3500]) {
      const child = spawnFixture('append-loop.ts', [dir])
      // Every `ack n` line, also those printed between the one awaited and the kill.
      child.stdout!.on('data', (chunk: Buffer) => {
        for (const match of chunk.toString().matchAll(/^ack (\d+)$/gm))
          acknowledged = Math.max(acknowledged, Number(match[1]))
      })
      await waitForLine(child, (l) => Number(l.split(' ')[1]) >= target)
      child.kill('SIGKILL')
      await waitForExit(child)
      const store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
      const count = await store.count()
      // Every acknowledged event is there; events written but not yet acknowledged may be too.
      expect(count).to.be.at.least(acknowledged)
      const expected = new EventMaker().many(count)
      let index = 0
      for await (const event of store.scanEvents()) expect(event).to.deep.equal(expected[index++])
      expect(index).to.equal(count)
      expect((await store.queryEvents({}, {limit: 1, offset: 0})).total).to.equal(count)
      acknowledged = count
      await store.close()
    }
  })

  it('refuses a second owner in another process, naming its pid, and takes over once it died', async () => {
    const child = spawnFixture('hold-lock.ts', [dir])
    await waitForLine(child, (l) => l === 'locked')
    const error = await openSqlJsStore({dataDir: dir}).catch((e: unknown) => e)
    expect(error).to.be.instanceOf(StoreError).with.property('reason', 'locked')
    expect((error as StoreError).lock?.pid).to.equal(child.pid)
    expect((error as StoreError).lock?.dataDir).to.equal(dir)
    expect((error as Error).message).to.equal(
      `data directory ${dir} is in use by process ${child.pid}; stop it or talk to it with --server URL`,
    )
    child.kill('SIGKILL')
    await waitForExit(child)
    // The dead owner's lock file is still there: stale, so it is taken over.
    expect(lockPid(dir)).to.equal(child.pid)
    const store = await openSqlJsStore({dataDir: dir})
    expect(lockPid(dir)).to.equal(process.pid)
    await store.close()
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).to.equal(false)
  })

  it('refuses a second open in the same process until the first is closed', async () => {
    const first: SqlJsStore = await openSqlJsStore({dataDir: dir})
    const error = await openSqlJsStore({dataDir: dir}).catch((e: unknown) => e)
    expect((error as StoreError).lock?.pid).to.equal(process.pid)
    await first.close()
    const second = await openSqlJsStore({dataDir: dir})
    await second.close()
  })

  it('takes over the lock of an owner that was killed but not reaped yet (a zombie)', async () => {
    // sh starts the owner in the background and becomes `sleep`, which never reaps it: once killed,
    // the owner stays a zombie (state Z) with its pid in the lock file.
    const fixture = path.join(import.meta.dirname, 'fixtures', 'hold-lock.ts')
    const parent = spawn('sh', ['-c', `"${process.execPath}" --import tsx "${fixture}" "${dir}" & exec sleep 60`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      await waitForLine(parent, (l) => l === 'locked')
      const owner = lockPid(dir)
      process.kill(owner, 'SIGKILL')
      const deadline = Date.now() + 10_000
      while (!fs.readFileSync(`/proc/${owner}/stat`, 'utf8').includes(') Z ') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20))
      expect(fs.readFileSync(`/proc/${owner}/stat`, 'utf8')).to.contain(') Z ')
      const store = await openSqlJsStore({dataDir: dir})
      expect(lockPid(dir)).to.equal(process.pid)
      await store.close()
    } finally {
      parent.kill('SIGKILL')
      await waitForExit(parent)
    }
  })

  it(
    'takes over a lock naming its own pid that it does not hold (an earlier process with the same pid, PID 1 of a ' +
      'restarted container)',
    async () => {
      fs.writeFileSync(path.join(dir, LOCK_FILE), `${process.pid}\n`)
      const store = await openSqlJsStore({dataDir: dir})
      // ...while a lock it holds still refuses a second open, also through a symbolic link.
      expect(await openSqlJsStore({dataDir: dir}).catch((e: unknown) => e)).to.be.instanceOf(StoreError)
      const link = `${dir}-link`
      fs.symlinkSync(dir, link)
      try {
        expect(await openSqlJsStore({dataDir: link}).catch((e: unknown) => e)).to.be.instanceOf(StoreError)
      } finally {
        fs.rmSync(link)
      }
      await store.close()
    },
  )

  it('takes over a lock file without a pid (its owner died while writing it)', async () => {
    fs.writeFileSync(path.join(dir, LOCK_FILE), '')
    const store = await openSqlJsStore({dataDir: dir})
    await store.close()
  })
})
