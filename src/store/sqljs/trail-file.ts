/**
 * A trail's metadata in its store directory (docs/trails.md, Storage): `trail.json` holds its name,
 * origin, creation time and, once sealed, when. Replaced whole through a synced temporary file and a
 * rename, so a crash leaves the old file or the new one, never half of either. Trail `default`'s
 * directory (the data directory itself) has one only once it is sealed.
 */
import {open, readFile, rename} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../core/errors.js'
import {DEFAULT_TRAIL} from '../../core/trail/name.js'
import {trailSealedError} from '../../core/trail/sealed.js'
import {fsyncDirectory, nodeFileOps} from './file-ops.js'

export const TRAIL_FILE = 'trail.json'
/** The directory of a data directory holding every trail but `default`, one directory each. */
export const TRAILS_DIR = 'trails'

export interface TrailFile {
  name: string
  /** The checkpoint origin; absent for `default`, whose origin is chosen as before trails existed. */
  origin?: string
  created_at?: string
  sealed_at?: string
}

/** The metadata of the store directory `dir`, undefined when it has none. */
export async function readTrailFile(dir: string): Promise<TrailFile | undefined> {
  const file = path.join(dir, TRAIL_FILE)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new AuditError('storage_unavailable', `cannot read ${file}: ${(error as Error).message}`, {cause: error})
  }
  try {
    const parsed = JSON.parse(text) as TrailFile
    if (typeof parsed.name !== 'string') throw new Error('it names no trail')
    return parsed
  } catch (error) {
    throw new AuditError('storage_unavailable', `${file} is damaged: ${(error as Error).message}`, {cause: error})
  }
}

/** The metadata as `trail.json` holds it. */
export function trailFileText(meta: TrailFile): string {
  return `${JSON.stringify(meta, null, 2)}\n`
}

/** Replaces `trail.json` in `dir` durably: written and synced beside it, renamed over it, the directory synced. */
export async function writeTrailFile(dir: string, meta: TrailFile): Promise<void> {
  const file = path.join(dir, TRAIL_FILE)
  const temporary = `${file}.tmp`
  const handle = await open(temporary, 'w', 0o644)
  try {
    await handle.writeFile(trailFileText(meta))
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temporary, file)
  await fsyncDirectory(nodeFileOps, dir)
}

/**
 * Whether the trail of a store directory is sealed, and sealing it (docs/trails.md, Sealing). The
 * store checks and seals in its one write queue, so that an append is either before the seal or refused.
 */
export class TrailSeal {
  private constructor(
    private readonly dir: string,
    private meta: TrailFile,
  ) {}

  static async open(dir: string): Promise<TrailSeal> {
    return new TrailSeal(dir, (await readTrailFile(dir)) ?? {name: DEFAULT_TRAIL})
  }

  get sealed(): boolean {
    return this.meta.sealed_at !== undefined
  }

  /** Throws trail_sealed (409) once sealed. */
  assertOpen(): void {
    if (this.sealed) throw trailSealedError(this.meta.name)
  }

  /** Seals the trail; false when it was sealed already (nothing changes). */
  async seal(now = new Date()): Promise<boolean> {
    if (this.sealed) return false
    const next = {...this.meta, sealed_at: now.toISOString()}
    await writeTrailFile(this.dir, next)
    this.meta = next
    return true
  }
}
