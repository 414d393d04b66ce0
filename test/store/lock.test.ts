import {expect} from 'chai'
import {spawn, type ChildProcess} from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {fileURLToPath} from 'node:url'
import {acquireLock, LOCK_FILE} from '../../src/store/sqljs/lock.js'
import {StoreError} from '../../src/store/errors.js'
import {currentOwner, type LockOwner} from '../../src/store/sqljs/lock-owner.js'
import {removeDir, spawnFixture, tempDir, waitForExit, waitForLine} from './support.js'

const here = path.dirname(fileURLToPath(import.meta.url))

/** A pid that runs nothing here: far above the kernel's pid_max. */
const DEAD_PID = 999_999_999

function writeLock(dir: string, content: string | Partial<LockOwner>): void {
  const text = typeof content === 'string' ? content : JSON.stringify({...currentOwner(), ...content})
  fs.writeFileSync(path.join(dir, LOCK_FILE), text)
}

function lockOwner(dir: string): LockOwner {
  return JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as LockOwner
}

function refusal(dir: string): StoreError {
  try {
    acquireLock(dir).release()
  } catch (error) {
    expect(error).to.be.instanceOf(StoreError).with.property('reason', 'locked')
    expect(error).to.have.property('code', 'storage_unavailable')
    return error as StoreError
  }
  expect.fail('the lock was taken')
}

/** proc(5) /proc/<pid>/stat field 22, read independently of the code under test. */
function startTimeOf(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

describe('data directory lock', function () {
  this.timeout(60_000)
  let dir: string

  beforeEach(() => {
    dir = tempDir()
  })

  afterEach(() => removeDir(dir))

  it('records host, boot id, PID namespace, pid and start time, and removes the file on release', () => {
    const lock = acquireLock(dir)
    const owner = lockOwner(dir)
    expect(owner.pid).to.equal(process.pid)
    expect(owner.hostname).to.equal(os.hostname())
    expect(owner.host).to.equal(fs.readFileSync('/etc/machine-id', 'utf8').trim())
    expect(owner.boot_id).to.equal(fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim())
    expect(owner.pid_ns).to.equal(fs.readlinkSync('/proc/self/ns/pid'))
    expect(owner.start_time).to.equal(startTimeOf(process.pid))
    lock.release()
    expect(fs.readdirSync(dir)).to.deep.equal([])
  })

  it('takes over a lock whose owner is gone from this host: dead pid, reused pid, earlier boot', () => {
    for (const stale of [
      {pid: DEAD_PID},
      // The pid runs, but it is another process than the one that took the lock.
      {pid: process.ppid, start_time: String(Number(startTimeOf(process.ppid)) + 1)},
      // The host rebooted since (a new boot id); the pid may well run again.
      {pid: process.ppid, boot_id: '00000000-0000-4000-8000-000000000000'},
    ]) {
      writeLock(dir, stale)
      const lock = acquireLock(dir)
      expect(lockOwner(dir).pid, JSON.stringify(stale)).to.equal(process.pid)
      lock.release()
    }
  })

  it('refuses a lock held by a live process on this host, naming it', () => {
    writeLock(dir, {pid: process.ppid, start_time: startTimeOf(process.ppid)})
    const error = refusal(dir)
    expect(error.lock?.pid).to.equal(process.ppid)
    expect(error.message).to.equal(
      `data directory ${dir} is in use by process ${process.ppid}; stop it or talk to it with --server URL`,
    )
    expect(lockOwner(dir).pid).to.equal(process.ppid)
  })

  it('refuses a lock from another host or another PID namespace, dead pid or not, saying how to clear it', () => {
    for (const other of [
      {host: 'another-machine-id', hostname: 'db-2', pid: DEAD_PID},
      // A cloned machine id, another host name: still another host.
      {hostname: 'db-2', pid: DEAD_PID},
      {pid_ns: 'pid:[1]', pid: DEAD_PID, hostname: os.hostname()},
    ]) {
      writeLock(dir, other)
      const before = fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')
      const error = refusal(dir)
      expect(error.lock?.pid).to.equal(DEAD_PID)
      expect(error.message).to.equal(
        `data directory ${dir} is in use by process ${DEAD_PID} on host ${other.hostname}, ` +
          'in another host or container that cannot be checked from here; stop it or talk to it with --server URL, ' +
          'or if that host or container is gone for good, make sure nothing else uses the directory and remove ' +
          path.join(dir, LOCK_FILE),
      )
      expect(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')).to.equal(before)
    }
  })

  it('still understands a lock file of the earlier format (only a pid)', async () => {
    writeLock(dir, `${DEAD_PID}\n`)
    acquireLock(dir).release()
    const other = tempDir()
    const child = spawnFixture('hold-lock.ts', [other])
    try {
      await waitForLine(child, (l) => l === 'locked')
      writeLock(dir, `${child.pid}\n`)
      expect(refusal(dir).lock?.pid).to.equal(child.pid)
    } finally {
      child.kill('SIGKILL')
      await waitForExit(child)
      removeDir(other)
    }
  })

  it('refuses a lock file it cannot read, and changes nothing', () => {
    writeLock(dir, '{"pid": "not a lock')
    const error = refusal(dir)
    expect(error.message).to.equal(
      `data directory ${dir} is locked by a lock file that cannot be read; ` +
        `if no audit-trail uses it, make sure nothing else uses the directory and remove ${path.join(dir, LOCK_FILE)}`,
    )
    expect(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')).to.equal('{"pid": "not a lock')
  })

  it('leaves exactly one owner when two processes race for a stale lock, 20 rounds', async () => {
    const fixture = path.join(here, 'fixtures', 'race-lock.ts')
    const racers = [0, 1].map(() =>
      spawn(process.execPath, ['--import', 'tsx', fixture], {
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    )
    const lines = racers.map((child) => {
      const queue: string[] = []
      const waiting: Array<(line: string) => void> = []
      let buffered = ''
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString()
        let end
        while ((end = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, end)
          buffered = buffered.slice(end + 1)
          const waiter = waiting.shift()
          if (waiter) waiter(line)
          else queue.push(line)
        }
      })
      return () =>
        new Promise<string>((resolve) => {
          if (queue.length > 0) resolve(queue.shift()!)
          else waiting.push(resolve)
        })
    })
    try {
      expect(await Promise.all(lines.map((next) => next()))).to.deep.equal(['ready', 'ready'])
      const stale = [
        `${DEAD_PID}\n`,
        JSON.stringify({...currentOwner(), pid: DEAD_PID}),
        JSON.stringify({...currentOwner(), boot_id: 'earlier-boot'}),
        '',
      ]
      for (let round = 0; round < 20; round++) {
        writeLock(dir, stale[round % stale.length]!)
        for (const child of racers) child.stdin!.write(`go ${dir}\n`)
        const outcomes = await Promise.all(lines.map((next) => next()))
        expect(
          outcomes.filter((o) => o === 'locked'),
          `round ${round}: ${outcomes.join(', ')}`,
        ).to.have.length(1)
        const winner = outcomes.indexOf('locked')
        expect(lockOwner(dir).pid).to.equal(racers[winner]!.pid)
        racers[winner]!.stdin!.write('release\n')
        expect(await lines[winner]!()).to.equal('released')
        expect(fs.readdirSync(dir), 'no claim or temporary file is left').to.deep.equal([])
      }
    } finally {
      for (const child of racers) child.kill('SIGKILL')
      await Promise.all(racers.map((child: ChildProcess) => waitForExit(child)))
    }
  })
})
