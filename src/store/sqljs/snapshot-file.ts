/**
 * The snapshot `events.sqlite`: a standard SQLite file (sql.js `export()`), so that
 * `sqlite3 events.sqlite 'select * from events'` works on a stopped store (docs/design.md).
 * It replaces the previous one atomically: temporary file, fsync, rename, fsync of the directory.
 * (search.sqlite, the search index, is written the same way under its own name.)
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import {fsyncDirectory, writeFully, type FileOps} from './file-ops.js'

export const SNAPSHOT_FILE = 'events.sqlite'
const temporary = (file: string) => `${file}.tmp`
/** Written in pieces so that a journal fsync waiting for the thread pool is not stuck behind it. */
const WRITE_CHUNK = 16 * 1024 * 1024
const READ_CHUNK = 64 * 1024 * 1024

/**
 * First step: the bytes into the temporary file, handed to the OS but not yet synced. Returns the
 * open descriptor for finishSnapshot. (Split so the caller can drop its copy of the bytes early.)
 */
export async function writeSnapshotData(
  ops: FileOps,
  dir: string,
  bytes: Uint8Array,
  file = SNAPSHOT_FILE,
): Promise<number> {
  const fd = await ops.open(path.join(dir, temporary(file)), 'w')
  try {
    for (let at = 0; at < bytes.length; at += WRITE_CHUNK) {
      await writeFully(ops, fd, bytes.subarray(at, Math.min(at + WRITE_CHUNK, bytes.length)), at)
    }
  } catch (error) {
    await ops.close(fd).catch(() => undefined)
    throw error
  }
  return fd
}

/** Second step: fsync, then atomically replace the file, then fsync the directory. */
export async function finishSnapshot(ops: FileOps, dir: string, fd: number, file = SNAPSHOT_FILE): Promise<void> {
  try {
    await ops.fsync(fd)
  } finally {
    await ops.close(fd)
  }
  await ops.rename(path.join(dir, temporary(file)), path.join(dir, file))
  await fsyncDirectory(ops, dir)
}

/**
 * The snapshot's bytes, or undefined when the directory has none yet. Read in pieces into one
 * array: fs.readFileSync stops at 2 GiB, while a typed array (and so sql.js's in-memory file)
 * holds up to 4 GiB, the ceiling the store's capacity keeps below (capacity.ts).
 */
export function readSnapshot(dir: string): Uint8Array | undefined {
  let fd: number
  try {
    fd = fs.openSync(path.join(dir, SNAPSHOT_FILE), 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const size = fs.fstatSync(fd).size
    const bytes = new Uint8Array(size)
    let done = 0
    while (done < size) {
      const read = fs.readSync(fd, bytes, done, Math.min(READ_CHUNK, size - done), done)
      if (read === 0) throw new Error(`${SNAPSHOT_FILE} ended at byte ${done} of ${size} while being read`)
      done += read
    }
    return bytes
  } finally {
    fs.closeSync(fd)
  }
}
