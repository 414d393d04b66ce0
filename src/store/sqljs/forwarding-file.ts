/**
 * The forwarding positions of a data directory (docs/forwarding.md): one small JSON file,
 * `forwarding.json`, replaced whole on each save by write, fsync, rename and a directory fsync, so
 * that after a crash it holds either the previous positions or the new ones (POSIX rename is atomic).
 * One process owns a data directory (lock.ts), so it always holds every destination.
 */
import {readFile} from 'node:fs/promises'
import * as path from 'node:path'
import type {ForwardingPosition, ForwardingPositions} from '../store.js'
import {fsyncDirectory, writeFully, type FileOps} from './file-ops.js'

const FILE = 'forwarding.json'

export class ForwardingFile implements ForwardingPositions {
  #positions: Map<string, ForwardingPosition> | undefined
  /** Saves one after the other, so that the file never goes back to an older set. */
  #writing: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly dataDir: string,
    private readonly ops: FileOps,
  ) {}

  async list(): Promise<ForwardingPosition[]> {
    return [...(await this.#load()).values()].map((position) => ({...position}))
  }

  async save(position: ForwardingPosition): Promise<boolean> {
    const positions = await this.#load()
    positions.set(`${position.destination}\n${position.trail}`, {...position})
    const text = JSON.stringify({positions: [...positions.values()]}, null, 1)
    const done = this.#writing.then(() => this.#write(text))
    this.#writing = done.catch(() => undefined)
    await done
    return true
  }

  async claim(): Promise<boolean> {
    return true
  }

  async release(): Promise<void> {}

  async #load(): Promise<Map<string, ForwardingPosition>> {
    if (this.#positions) return this.#positions
    let text: string | undefined
    try {
      text = await readFile(path.join(this.dataDir, FILE), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const stored = text === undefined ? [] : (JSON.parse(text) as {positions: ForwardingPosition[]}).positions
    this.#positions ??= new Map(stored.map((position) => [`${position.destination}\n${position.trail}`, position]))
    return this.#positions
  }

  async #write(text: string): Promise<void> {
    const target = path.join(this.dataDir, FILE)
    const temporary = `${target}.tmp`
    const fd = await this.ops.open(temporary, 'w')
    try {
      await writeFully(this.ops, fd, new TextEncoder().encode(text), 0)
      await this.ops.fsync(fd)
    } finally {
      await this.ops.close(fd)
    }
    await this.ops.rename(temporary, target)
    await fsyncDirectory(this.ops, this.dataDir)
  }
}
