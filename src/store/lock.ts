/**
 * One process owns a data directory at a time (CONTRACT.md section 7). The owner holds a lock file
 * created exclusively ('wx') that holds its pid. A lock whose pid is no longer alive (the owner was
 * killed) is stale and is taken over; a live one refuses with StoreLockedError, whose message names
 * the owner and suggests talking to it with --server instead.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'

export const LOCK_FILE = 'store.lock'

export class StoreLockedError extends Error {
  constructor(
    readonly pid: number,
    readonly dataDir: string,
  ) {
    super(`data directory ${dataDir} is in use by process ${pid}; stop it or talk to it with --server URL`)
    this.name = 'StoreLockedError'
  }
}

/**
 * True when a process with this pid is running. Signal 0 checks that the pid exists; on Linux a
 * killed child its parent has not reaped yet (a zombie, state Z in /proc/<pid>/stat) still exists
 * but owns nothing any more, so it does not count (a test harness or supervisor that kills the
 * server and starts it again before reaping would otherwise be refused).
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return true
  }
  // proc(5): "pid (comm) state ...", where comm may itself hold parentheses.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}

/** The lock files this process holds now (a lock naming this pid otherwise is an earlier process's). */
const heldFiles = new Set<string>()

/** A lock file's name for heldFiles: one directory reached through a symbolic link is the same one. */
function heldKey(file: string): string {
  try {
    return path.join(fs.realpathSync(path.dirname(file)), path.basename(file))
  } catch {
    return path.resolve(file)
  }
}

function readOwner(file: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

export interface DirectoryLock {
  readonly file: string
  release(): void
}

/**
 * Takes the lock of `dataDir` or throws StoreLockedError. The lock is also removed when the process
 * exits normally; after a kill -9 the next owner finds it stale.
 */
export function acquireLock(dataDir: string): DirectoryLock {
  const file = path.join(dataDir, LOCK_FILE)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, {flag: 'wx'})
      return holdLock(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = readOwner(file)
      // This pid is ours but the lock is not held here: left by an earlier process that had the
      // same pid (PID 1 of a container that was killed and started again).
      const earlierSelf = owner === process.pid && !heldFiles.has(heldKey(file))
      if (owner !== undefined && !earlierSelf && isAlive(owner)) throw new StoreLockedError(owner, dataDir)
      // Stale: its owner died (or died before writing its pid). Remove it and try again.
      fs.rmSync(file, {force: true})
    }
  }
  throw new Error(`cannot take the lock ${file}`)
}

function holdLock(file: string): DirectoryLock {
  heldFiles.add(heldKey(file))
  const releaseOnExit = () => fs.rmSync(file, {force: true})
  process.on('exit', releaseOnExit)
  let held = true
  return {
    file,
    release() {
      if (!held) return
      held = false
      heldFiles.delete(heldKey(file))
      process.off('exit', releaseOnExit)
      // Only remove the file while it is still ours.
      if (readOwner(file) === process.pid) fs.rmSync(file, {force: true})
    },
  }
}
