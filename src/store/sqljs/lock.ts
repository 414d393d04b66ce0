/**
 * One process owns a data directory at a time, also across PID namespaces and hosts that share the
 * directory (docs/design.md). The lock file `store.lock` records its owner (lock-owner.ts)
 * and appears whole: it is written under a temporary name and hard-linked into place, and link(2)
 * fails when the name exists. A lock whose owner is provably gone is taken over; any other refuses
 * with a StoreError `locked`.
 *
 * Taking over removes exactly the stale file that was judged, never whatever lock is there now:
 * the taker first creates a claim file named after the stale contents, which only one process can
 * create, and removes the lock only while it still holds those contents. Only the claim's holder
 * may remove a lock with those contents, and its owner is gone, so nothing changes it in between.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import {randomBytes, sha256Hex} from '../../core/crypto.js'
import {StoreError} from '../errors.js'
import {currentOwner, isAlive, ownerState, parseLock, type LockOwner, type OwnerState} from './lock-owner.js'

export const LOCK_FILE = 'store.lock'

/** Rounds of create / judge / take over before giving up on a lock that keeps changing. */
const ATTEMPTS = 100
/** The pause between rounds while another process is taking a stale lock over. */
const PAUSE_MS = 20

/** Another process owns the directory: the store cannot be used now (exit 3). */
function lockedError(pid: number, dataDir: string, host: string | undefined): StoreError {
  const file = path.join(dataDir, LOCK_FILE)
  const clear = `make sure nothing else uses the directory and remove ${file}`
  const message =
    pid === 0
      ? `data directory ${dataDir} is locked by a lock file that cannot be read; if no audit-trail uses it, ${clear}`
      : host === undefined
        ? `data directory ${dataDir} is in use by process ${pid}; stop it or talk to it with --server URL`
        : `data directory ${dataDir} is in use by process ${pid} on host ${host}, in another host or container ` +
          `that ` +
          `cannot be checked from here; stop it or talk to it with --server URL, or if that host or container is ` +
          `gone for good, ${clear}`
  return new StoreError('locked', message, {lock: {pid, dataDir, ...(host !== undefined && {host})}})
}

/** The lock files this process holds now (a lock naming this process otherwise is left over). */
const heldFiles = new Set<string>()

/** A lock file's name for heldFiles: one directory reached through a symbolic link is the same one. */
function heldKey(file: string): string {
  try {
    return path.join(fs.realpathSync(path.dirname(file)), path.basename(file))
  } catch {
    return path.resolve(file)
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Creates `file` holding `text`, whole, unless it exists (then false). */
function createWhole(file: string, text: string): boolean {
  const temporary = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`
  const fd = fs.openSync(temporary, 'wx')
  try {
    fs.writeFileSync(fd, text)
    // A lock that survives a crash of the host holds its owner, so that the next boot sees it is stale.
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  try {
    fs.linkSync(temporary, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    fs.rmSync(temporary, {force: true})
  }
}

function isSelf(owner: LockOwner, self: LockOwner): boolean {
  return (
    owner.pid === self.pid &&
    owner.start_time === self.start_time &&
    owner.pid_ns === self.pid_ns &&
    owner.boot_id === self.boot_id &&
    owner.host === self.host
  )
}

/** The state of the owner a lock file's `text` records, seen from this process. */
function stateOf(file: string, text: string, self: LockOwner): {state: OwnerState; pid: number; host?: string} {
  const recorded = parseLock(text)
  const held = heldFiles.has(heldKey(file))
  switch (recorded.kind) {
    // Left by a process that died while an earlier version wrote it.
    case 'empty':
      return {state: 'gone', pid: 0}
    case 'unreadable':
      return {state: 'unknown', pid: 0}
    // The earlier format says nothing of host or namespace: its pid is checked here, as it was.
    // This pid, not held here: an earlier process with the same pid (PID 1 of a restarted container).
    case 'pid': {
      const alive = recorded.pid === self.pid ? held : isAlive(recorded.pid)
      return {state: alive ? 'alive' : 'gone', pid: recorded.pid}
    }
    case 'owner': {
      const {owner} = recorded
      if (isSelf(owner, self)) return {state: held ? 'alive' : 'gone', pid: owner.pid}
      const state = ownerState(owner, self)
      return {state, pid: owner.pid, host: state === 'unknown' ? owner.hostname : undefined}
    }
  }
}

/**
 * Removes `file` if it still holds `staleText`, through the claim file named after those contents.
 * A claim left by a taker that died is itself stale and taken over the same way.
 */
function removeStale(file: string, staleText: string, self: LockOwner, depth = 0): void {
  const claim = `${file}.takeover-${sha256Hex(staleText).slice(0, 16)}`
  if (!createWhole(claim, `${JSON.stringify(self)}\n`)) {
    const claimText = readText(claim)
    if (claimText !== undefined && depth < 3 && stateOf(claim, claimText, self).state === 'gone') {
      removeStale(claim, claimText, self, depth + 1)
    }
    return
  }
  try {
    if (readText(file) === staleText) fs.rmSync(file)
  } finally {
    fs.rmSync(claim, {force: true})
  }
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

export interface DirectoryLock {
  readonly file: string
  release(): void
}

/**
 * Takes the lock of `dataDir` or throws a StoreError `locked`. The lock is also removed when the process
 * exits normally; after a kill -9 the next owner on this host finds it stale.
 */
export function acquireLock(dataDir: string): DirectoryLock {
  const file = path.join(dataDir, LOCK_FILE)
  const self = currentOwner()
  const text = `${JSON.stringify(self)}\n`
  let last = {pid: 0, host: undefined as string | undefined}
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createWhole(file, text)) return holdLock(file, text)
    const found = readText(file)
    if (found === undefined) continue
    const {state, pid, host} = stateOf(file, found, self)
    if (state !== 'gone') throw lockedError(pid, dataDir, host)
    last = {pid, host}
    removeStale(file, found, self)
    // Another process may be taking the same stale lock over: the next round sees its outcome.
    if (readText(file) === found) pause(PAUSE_MS)
  }
  throw lockedError(last.pid, dataDir, last.host)
}

/**
 * The removers of the locks this process holds, run at exit by one listener: a service holds one
 * lock per trail (docs/trails.md), more than the listeners Node allows an event without a warning.
 */
const removers = new Set<() => void>()
let exitHooked = false

function removeAtExit(remove: () => void): void {
  removers.add(remove)
  if (exitHooked) return
  exitHooked = true
  process.on('exit', () => removers.forEach((r) => r()))
}

function holdLock(file: string, text: string): DirectoryLock {
  heldFiles.add(heldKey(file))
  // Only remove the file while it still holds this process's lock.
  const remove = () => {
    try {
      if (readText(file) === text) fs.rmSync(file, {force: true})
    } catch {
      // An unreadable lock file is not this process's to remove.
    }
  }
  removeAtExit(remove)
  let held = true
  return {
    file,
    release() {
      if (!held) return
      held = false
      heldFiles.delete(heldKey(file))
      removers.delete(remove)
      remove()
    },
  }
}
