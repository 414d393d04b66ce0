/**
 * The few file system calls the journal and the snapshot writer make, behind one small interface
 * so that tests (and the reliability suite) can inject a failing write, fsync or rename.
 */
import * as fs from 'node:fs'
import {promisify} from 'node:util'

export interface FileOps {
  /** Opens a file (or a directory with 'r', to fsync it) and returns its descriptor. */
  open(path: string, flags: string): Promise<number>
  /** Writes bytes at a position; returns how many were written (may be fewer). */
  write(fd: number, data: Uint8Array, position: number): Promise<number>
  fsync(fd: number): Promise<void>
  ftruncate(fd: number, length: number): Promise<void>
  close(fd: number): Promise<void>
  rename(from: string, to: string): Promise<void>
  unlink(path: string): Promise<void>
}

const write = promisify(fs.write)

export const nodeFileOps: FileOps = {
  open: promisify(fs.open) as (path: string, flags: string) => Promise<number>,
  write: async (fd, data, position) => (await write(fd, data, 0, data.length, position)).bytesWritten,
  fsync: promisify(fs.fsync),
  ftruncate: promisify(fs.ftruncate),
  close: promisify(fs.close),
  rename: promisify(fs.rename),
  unlink: promisify(fs.unlink),
}

/** The node implementation with some calls replaced. */
export function fileOps(overrides: Partial<FileOps> = {}): FileOps {
  return {...nodeFileOps, ...overrides}
}

/** Writes all of `data` at `position`, looping over short writes. */
export async function writeFully(ops: FileOps, fd: number, data: Uint8Array, position: number): Promise<void> {
  let done = 0
  while (done < data.length) {
    const written = await ops.write(fd, data.subarray(done), position + done)
    if (written <= 0) throw new Error('write made no progress')
    done += written
  }
}

/** Makes a created, renamed or removed directory entry durable (POSIX needs the directory synced). */
export async function fsyncDirectory(ops: FileOps, dir: string): Promise<void> {
  const fd = await ops.open(dir, 'r')
  try {
    await ops.fsync(fd)
  } finally {
    await ops.close(fd)
  }
}
