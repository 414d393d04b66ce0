/**
 * The data directory a store opens: made when asked for (serve, ingest, timestamp), otherwise it
 * must exist and be empty or hold a store. A read on a mistyped path would otherwise make a new,
 * empty directory and answer from it: `verify` or `policy check` would pass on nothing at all.
 */
import * as fs from 'node:fs'
import {AuditError} from '../../core/errors.js'
import {JOURNAL_FILE} from './journal.js'
import {SNAPSHOT_FILE} from './snapshot-file.js'
import {TRAIL_FILE, TRAILS_DIR} from './trail-file.js'

/** A data directory that cannot be used as given: a usage error (the CLI exits 2). */
export class DataDirError extends AuditError {
  constructor(message: string) {
    super('validation_error', message)
    this.name = 'DataDirError'
  }
}

/** Checks (and with `create`, makes) the data directory `dir`; a DataDirError says what is wrong. */
export function prepareDataDir(dir: string, create: boolean): void {
  let stats: fs.Stats
  try {
    stats = fs.statSync(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT')
      throw new DataDirError(
        `cannot use data directory ${dir}: ${code ?? (error as Error).message}; check its permissions or give ` +
          `another --data-dir`,
      )
    if (!create) {
      throw new DataDirError(
        `no data directory at ${dir}: nothing has been recorded there (serve, ingest and timestamp create one); ` +
          `to ask a running server, give --server URL`,
      )
    }
    try {
      // Owner only (docs/security.md): the directory holds every event and the log's signing key.
      fs.mkdirSync(dir, {recursive: true, mode: 0o700})
    } catch (mkdirError) {
      throw new DataDirError(
        `cannot create data directory ${dir}: ` +
          `${(mkdirError as NodeJS.ErrnoException).code ?? (mkdirError as Error).message}; check the permissions ` +
          `of its parent or give another --data-dir`,
      )
    }
    return
  }
  if (!stats.isDirectory())
    throw new DataDirError(`data directory ${dir} is not a directory; give --data-dir a directory`)
  // An empty directory is an empty store; one with other things in it and none of a store's own
  // files (its trails' included: docs/trails.md) is another directory given by mistake
  // (`--data-dir .`), not a store holding nothing.
  if (!create) {
    const entries = fs.readdirSync(dir)
    const own = (name: string) =>
      name === SNAPSHOT_FILE || JOURNAL_FILE.test(name) || name === TRAILS_DIR || name === TRAIL_FILE
    if (entries.length > 0 && !entries.some(own)) {
      throw new DataDirError(
        `${dir} is not an audit-trail data directory (it has no events.sqlite and no journal); to ask a running ` +
          `server, give --server URL`,
      )
    }
  }
}
