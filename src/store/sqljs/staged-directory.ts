/**
 * A directory of files created once and whole: the files are written and synced in a private
 * staging directory that is renamed into place, so a crash never leaves half of them, and of two
 * processes racing, the first rename wins (the other gets `false` and reads the winner's files).
 * The embedded TSA (`tsa/`) and the log key (`log/`) are made this way.
 */
import {chmod, mkdir, mkdtemp, open, rename, rm} from 'node:fs/promises'
import path from 'node:path'
import {fsyncDirectory, nodeFileOps} from './file-ops.js'

export interface StagedFile {
  name: string
  text: string
  mode: number
}

/** Creates `<parent>/<name>` holding `files`; false when another process created it first. */
export async function createDirectoryOnce(
  parent: string,
  name: string,
  files: readonly StagedFile[],
): Promise<boolean> {
  await mkdir(parent, {recursive: true, mode: 0o700})
  const staging = await mkdtemp(path.join(parent, `.${name}-`))
  try {
    for (const file of files) await writeDurably(path.join(staging, file.name), file.text, file.mode)
    await chmod(staging, 0o755)
    await rename(staging, path.join(parent, name))
    await fsyncDirectory(nodeFileOps, parent)
    return true
  } catch (error) {
    await rm(staging, {recursive: true, force: true})
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false
    throw error
  }
}

async function writeDurably(file: string, text: string, mode: number): Promise<void> {
  const handle = await open(file, 'wx', mode)
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
}
