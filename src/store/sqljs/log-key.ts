/**
 * Where the embedded store keeps the log's signing key: `<data-dir>/log/log.key`, an Ed25519
 * PKCS#8 PEM of mode 0600 beside `tsa/`. Created once, with the care the embedded TSA takes: the
 * file is written and synced in a private staging directory that is renamed into place, so a crash
 * never leaves half a key and of two processes racing, the first rename wins and both use its key.
 */
import {mkdir, readFile} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../core/errors.js'
import {createDirectoryOnce} from './staged-directory.js'

export const LOG_KEY_DIR = 'log'
export const LOG_KEY_FILE = 'log.key'

export async function readOrCreateLogKey(dataDir: string, create: () => string): Promise<string> {
  const dir = path.join(dataDir, LOG_KEY_DIR)
  const existing = await readKey(dir, true)
  if (existing !== undefined) return existing
  try {
    await createDirectoryOnce(dataDir, LOG_KEY_DIR, [{name: LOG_KEY_FILE, text: create(), mode: 0o600}])
  } catch (error) {
    throw new AuditError('storage_unavailable', `cannot create the log key in ${dir}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  const key = await readKey(dir)
  if (key === undefined)
    throw new AuditError('storage_unavailable', `the log key ${path.join(dir, LOG_KEY_FILE)} is missing`)
  return key
}

/** The log key of a data directory, undefined when it has none yet (`migrate` copies it). */
export function readLogKey(dataDir: string): Promise<string | undefined> {
  return readKey(path.join(dataDir, LOG_KEY_DIR))
}

async function readKey(dir: string, create = false): Promise<string | undefined> {
  try {
    if (create) await mkdir(path.dirname(dir), {recursive: true, mode: 0o700})
    return await readFile(path.join(dir, LOG_KEY_FILE), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new AuditError('storage_unavailable', `cannot read the log key in ${dir}: ${(error as Error).message}`, {
      cause: error,
    })
  }
}
