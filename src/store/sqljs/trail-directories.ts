/**
 * The trails of a data directory (docs/trails.md, Storage): trail NAME is the store directory
 * `trails/NAME/`, with its own lock, files, journal, capacity and log key, and its `trail.json`.
 * A trail's directory is made whole or not at all (staged-directory.ts), so a crash during
 * `trails create` leaves no trail; what it may leave is a hidden staging directory, removed on
 * the next opening by the process that owns the data directory.
 */
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../core/errors.js'
import {isTrailName} from '../../core/trail/name.js'
import {createDirectoryOnce} from './staged-directory.js'
import {readTrailFile, TRAIL_FILE, trailFileText, TRAILS_DIR, type TrailFile} from './trail-file.js'

export class TrailDirectories {
  readonly root: string

  constructor(dataDir: string) {
    this.root = path.join(dataDir, TRAILS_DIR)
  }

  /** The store directory of trail `name`. */
  directoryOf(name: string): string {
    return path.join(this.root, name)
  }

  /** Every trail's metadata, by name. */
  async list(): Promise<TrailFile[]> {
    const names = (await this.#entries()).filter((entry) => isTrailName(entry)).sort()
    const files = await Promise.all(names.map((name) => readTrailFile(this.directoryOf(name))))
    return files.filter((file): file is TrailFile => file !== undefined)
  }

  /** The metadata of trail `name`, undefined when there is no such trail. */
  async get(name: string): Promise<TrailFile | undefined> {
    return isTrailName(name) ? readTrailFile(this.directoryOf(name)) : undefined
  }

  /** Makes trail `meta.name`'s directory with its `trail.json`, at once; `conflict` when it exists. */
  async create(meta: TrailFile): Promise<void> {
    let created: boolean
    try {
      created = await createDirectoryOnce(this.root, meta.name, [
        {name: TRAIL_FILE, text: trailFileText(meta), mode: 0o644},
      ])
    } catch (error) {
      throw new AuditError(
        'storage_unavailable',
        `cannot create trail ${meta.name} in ${this.root}: ${(error as Error).message}`,
        {cause: error},
      )
    }
    if (!created) throw new AuditError('conflict', `trail ${meta.name} exists`)
  }

  /**
   * Removes what a crash during `trails create` left: staging directories (their names begin with
   * a dot, which no trail's does). Only the owner of the data directory's lock calls it.
   */
  async removeStaging(): Promise<void> {
    for (const entry of await this.#entries())
      if (entry.startsWith('.')) await rm(path.join(this.root, entry), {recursive: true, force: true})
  }

  async #entries(): Promise<string[]> {
    try {
      return await readdir(this.root)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw new AuditError('storage_unavailable', `cannot read ${this.root}: ${(error as Error).message}`, {
        cause: error,
      })
    }
  }
}
