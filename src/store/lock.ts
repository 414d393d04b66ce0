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

/** True when a process with this pid exists (signal 0 checks without signalling). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
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
      if (owner !== undefined && isAlive(owner)) throw new StoreLockedError(owner, dataDir)
      // Stale: its owner died (or died before writing its pid). Remove it and try again.
      fs.rmSync(file, {force: true})
    }
  }
  throw new Error(`cannot take the lock ${file}`)
}

function holdLock(file: string): DirectoryLock {
  const releaseOnExit = () => fs.rmSync(file, {force: true})
  process.on('exit', releaseOnExit)
  let held = true
  return {
    file,
    release() {
      if (!held) return
      held = false
      process.off('exit', releaseOnExit)
      // Only remove the file while it is still ours.
      if (readOwner(file) === process.pid) fs.rmSync(file, {force: true})
    },
  }
}
