/**
 * Who holds a data directory's lock, and whether that holder is provably gone. A pid only means
 * something on one host, in one boot, inside one PID namespace; the lock file records all three
 * and the process's start time, so that a reused pid is not mistaken for the owner.
 */
import * as fs from 'node:fs'
import * as os from 'node:os'

/** The lock file's contents (JSON). A file written by an earlier version holds only the pid. */
export interface LockOwner {
  /** /etc/machine-id, or the host name where there is none. */
  host: string
  hostname: string
  /** The kernel's boot id: another one means the host rebooted since the lock was taken. */
  boot_id?: string
  /** `pid:[inode]` of the owner's PID namespace (each container has its own). */
  pid_ns?: string
  pid: number
  /** proc(5) /proc/<pid>/stat field 22: the start time in clock ticks after boot. */
  start_time?: string
  acquired_at: string
}

/** What a lock file says: an owner, only a pid (the earlier format), nothing, or something unreadable. */
export type RecordedLock =
  {kind: 'owner'; owner: LockOwner} | {kind: 'pid'; pid: number} | {kind: 'empty'} | {kind: 'unreadable'}

/** gone: provably dead, take over; alive: running here; unknown: another host or namespace. */
export type OwnerState = 'gone' | 'alive' | 'unknown'

function readTrimmed(file: string): string | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8').trim()
    return text === '' ? undefined : text
  } catch {
    return undefined
  }
}

/** The fields of /proc/<pid>/stat after `(comm)`, which may itself hold spaces and parentheses. */
function procStat(pid: number | 'self'): string[] | undefined {
  const stat = readTrimmed(`/proc/${pid}/stat`)
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** Field 22 of proc(5)'s stat; the fields after comm start at field 3. */
function startTime(pid: number | 'self'): string | undefined {
  return procStat(pid)?.[22 - 3]
}

function pidNamespace(): string | undefined {
  try {
    return fs.readlinkSync('/proc/self/ns/pid')
  } catch {
    return undefined
  }
}

export function currentOwner(): LockOwner {
  const hostname = os.hostname()
  return {
    host: readTrimmed('/etc/machine-id') ?? readTrimmed('/var/lib/dbus/machine-id') ?? hostname,
    hostname,
    boot_id: readTrimmed('/proc/sys/kernel/random/boot_id'),
    pid_ns: pidNamespace(),
    pid: process.pid,
    start_time: startTime('self'),
    acquired_at: new Date().toISOString(),
  }
}

export function parseLock(text: string): RecordedLock {
  const trimmed = text.trim()
  if (trimmed === '') return {kind: 'empty'}
  if (/^\d+$/.test(trimmed)) return {kind: 'pid', pid: Number(trimmed)}
  try {
    const owner = JSON.parse(trimmed) as LockOwner
    const named = typeof owner.host === 'string' && typeof owner.hostname === 'string'
    if (named && Number.isSafeInteger(owner.pid) && owner.pid > 0) return {kind: 'owner', owner}
  } catch {
    // Not JSON: unreadable below.
  }
  return {kind: 'unreadable'}
}

/**
 * True when a process with this pid runs in this PID namespace. A killed child its parent has not
 * reaped yet (a zombie, state Z) still has its pid but owns nothing any more.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  const state = procStat(pid)?.[0]
  return state !== 'Z' && state !== 'X'
}

/**
 * Whether `owner` is provably gone, seen from `self`. Only a process on this host can be checked;
 * a lock from an earlier boot of this host is gone (the host rebooted); inside this boot the pid is
 * checked only in the owner's own PID namespace, and a live pid with another start time was reused.
 */
export function ownerState(owner: LockOwner, self: LockOwner): OwnerState {
  if (owner.host !== self.host || owner.hostname !== self.hostname) return 'unknown'
  if (owner.boot_id === self.boot_id) return sameBoot(owner, self)
  // Both known and different: the host rebooted. Only one known: nothing can be said.
  return owner.boot_id !== undefined && self.boot_id !== undefined ? 'gone' : 'unknown'
}

function sameBoot(owner: LockOwner, self: LockOwner): OwnerState {
  if (owner.pid_ns !== self.pid_ns) return 'unknown'
  if (!isAlive(owner.pid)) return 'gone'
  if (owner.start_time === undefined) return 'alive'
  const now = startTime(owner.pid)
  return now !== undefined && now !== owner.start_time ? 'gone' : 'alive'
}
