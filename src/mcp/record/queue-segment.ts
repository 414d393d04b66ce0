/**
 * The files of the proxy's event queue: one append-only NDJSON segment per proxy process, named
 * `<host>~<pid>~<time>.ndjson`, beside a `.acked` file holding how many of its bytes the log has
 * recorded. A segment whose process is gone (same host, no such pid) is an orphan: the next proxy
 * for the same log claims it by renaming it, and sends what is left of it before its own events.
 */
import {open, readdir, readFile, rename, rm, writeFile, type FileHandle} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

const SEGMENT = /^(.+)~(\d+)~(\d+)(?:-\w+)?\.ndjson$/

export interface Segment {
  file: string
  fd: FileHandle
  /** Bytes the log has recorded, from the start of the file. */
  acked: number
  /** Bytes durably written (an orphan: its size, a torn last line included). */
  written: number
  /** Events in the file past `acked`. */
  events: number
  own: boolean
}

const host = () => encodeURIComponent(os.hostname())

function ackFile(file: string): string {
  return `${file}.acked`
}

async function readAcked(file: string): Promise<number> {
  try {
    const value = Number((await readFile(ackFile(file), 'utf8')).trim())
    return Number.isSafeInteger(value) && value >= 0 ? value : 0
  } catch {
    return 0
  }
}

/** Records how far a segment was recorded; a rename, so a crash leaves the old or the new count. */
export async function saveAcked(segment: Segment): Promise<void> {
  const temporary = `${ackFile(segment.file)}.tmp`
  await writeFile(temporary, String(segment.acked))
  await rename(temporary, ackFile(segment.file))
}

/** Whether process `pid` of this host still runs (EPERM: it runs, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Counts complete lines (events) in a buffer. */
function countLines(bytes: Buffer): number {
  let count = 0
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) count++
  return count
}

/** The events (complete lines) of a file between two offsets, read a MiB at a time. */
async function countEvents(fd: FileHandle, from: number, to: number): Promise<number> {
  const buffer = Buffer.alloc(Math.min(1 << 20, Math.max(1, to - from)))
  let count = 0
  for (let at = from; at < to;) {
    const {bytesRead} = await fd.read(buffer, 0, Math.min(buffer.length, to - at), at)
    if (bytesRead === 0) break
    count += countLines(buffer.subarray(0, bytesRead))
    at += bytesRead
  }
  return count
}

/** This process's own segment, new and empty. */
export async function createOwnSegment(dir: string): Promise<Segment> {
  const suffix = Math.random().toString(36).slice(2, 8)
  const file = path.join(dir, `${host()}~${process.pid}~${Date.now()}-${suffix}.ndjson`)
  const fd = await open(file, 'a+')
  return {file, fd, acked: 0, written: 0, events: 0, own: true}
}

/**
 * Claims the orphaned segments of `dir` (oldest first) by renaming them to this process; a
 * segment another proxy claimed first is skipped. Fully recorded ones are removed.
 */
export async function adoptOrphans(dir: string): Promise<Segment[]> {
  const orphans = (await readdir(dir))
    .map((name) => ({name, match: SEGMENT.exec(name)}))
    .filter(({match}) => match && match[1] === host() && Number(match[2]) !== process.pid && !alive(Number(match[2])))
    .sort((a, b) => Number(a.match![3]) - Number(b.match![3]) || a.name.localeCompare(b.name))
  const adopted: Segment[] = []
  for (const [n, {name, match}] of orphans.entries()) {
    const orphan = path.join(dir, name)
    const file = path.join(dir, `${host()}~${process.pid}~${match![3]}-a${n}.ndjson`)
    const acked = await readAcked(orphan)
    try {
      await rename(orphan, file)
    } catch {
      continue
    }
    await rm(ackFile(orphan), {force: true})
    const fd = await open(file, 'r')
    const size = (await fd.stat()).size
    const from = Math.min(acked, size)
    const segment: Segment = {
      file,
      fd,
      acked: from,
      written: size,
      events: await countEvents(fd, from, size),
      own: false,
    }
    if (segment.events === 0) await removeSegment(segment)
    else {
      await saveAcked(segment)
      adopted.push(segment)
    }
  }
  return adopted
}

export async function removeSegment(segment: Segment): Promise<void> {
  await segment.fd.close().catch(() => undefined)
  await rm(segment.file, {force: true})
  await rm(ackFile(segment.file), {force: true})
}
