/**
 * Where the embedded store keeps the log's signing key: `<data-dir>/log/log.key`, an Ed25519
 * PKCS#8 PEM of mode 0600 beside `tsa/`. Created once, with the care the embedded TSA takes: the
 * file is written and synced in a private staging directory that is renamed into place, so a crash
 * never leaves half a key and of two processes racing, the first rename wins and both use its key.
 */
import {mkdir, mkdtemp, open, readFile, rename, rm} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../core/errors.js'

export const LOG_KEY_DIR = 'log'
export const LOG_KEY_FILE = 'log.key'

export async function readOrCreateLogKey(dataDir: string, create: () => string): Promise<string> {
  const dir = path.join(dataDir, LOG_KEY_DIR)
  const existing = await readKey(dir)
  if (existing !== undefined) return existing
  const staging = await mkdtemp(path.join(dataDir, '.log-'))
  try {
    const handle = await open(path.join(staging, LOG_KEY_FILE), 'wx', 0o600)
    try {
      await handle.writeFile(create())
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(staging, dir)
    await syncDirectory(dataDir)
  } catch (error) {
    await rm(staging, {recursive: true, force: true})
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') {
      throw new AuditError('storage_unavailable', `cannot create the log key in ${dir}: ${(error as Error).message}`, {
        cause: error,
      })
    }
  }
  const key = await readKey(dir)
  if (key === undefined)
    throw new AuditError('storage_unavailable', `the log key ${path.join(dir, LOG_KEY_FILE)} is missing`)
  return key
}

async function readKey(dir: string): Promise<string | undefined> {
  try {
    await mkdir(path.dirname(dir), {recursive: true})
    return await readFile(path.join(dir, LOG_KEY_FILE), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new AuditError('storage_unavailable', `cannot read the log key in ${dir}: ${(error as Error).message}`, {
      cause: error,
    })
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
