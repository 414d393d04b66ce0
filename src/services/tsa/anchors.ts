/**
 * The trust anchors of a log's timestamps when no external TSA is configured (the CLI, `serve`
 * without `--tsa-url`): the embedded TSA's CA when it exists, and the CA certificates of every
 * external TSA that issued a token for the log, recorded when it did (after the TSA answered,
 * before the token is stored). Without that record, a log stamped by `serve --tsa-url --tsa-ca`
 * and then exported or checked without that flag offered only the embedded CA (created on the
 * spot), and the package failed its own verification.
 *
 * Both live where the log lives (AnchorRecord): in a data directory, its `tsa/ca.pem` and
 * EXTERNAL_ANCHORS_FILE; in a database, its `embedded_tsa` and `tsa_anchors` tables, never a
 * directory (docs/postgres.md, "The log's identity"). Whoever can write there could sign with the
 * embedded TSA's key anyway, and `--tsa-ca` is the independent check. A service configured with an
 * external TSA trusts its `--tsa-ca` only.
 */
import {open, readFile, rename} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../core/errors.js'
import {splitCertificates} from '../../core/timestamp/index.js'
import type {EventStore} from '../../store/store.js'
import type {TimestampAuthority} from './authority.js'

export const EXTERNAL_ANCHORS_FILE = 'external-tsa-ca.pem'
const EMBEDDED_CA_FILE = path.join('tsa', 'ca.pem')

/** Where a log keeps the anchors of its timestamps. */
export interface AnchorRecord {
  /** Named in messages. */
  where: string
  /** The external TSAs' CA certificates recorded so far, one per element. */
  recorded(): Promise<string[]>
  /** Adds the certificates not recorded yet, durably. */
  record(pems: string[]): Promise<void>
  /** The embedded TSA's CA certificate when the log has an embedded TSA (never creates one). */
  embeddedCa(): Promise<string[]>
}

/** The certificates of a PEM file; none when it is missing or not PEM (a damaged file adds no anchor). */
async function readCertificates(file: string): Promise<string[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  try {
    return splitCertificates([text])
  } catch {
    return []
  }
}

/** Writes `text` to `file` through a synced temporary file and a rename (never half a file). */
async function replaceDurably(file: string, text: string): Promise<void> {
  const temporary = `${file}.tmp`
  const handle = await open(temporary, 'w', 0o644)
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temporary, file)
}

/** The anchors of a data directory: EXTERNAL_ANCHORS_FILE and the embedded TSA's `tsa/ca.pem`. */
export function directoryAnchors(dataDir: string): AnchorRecord {
  const file = path.join(dataDir, EXTERNAL_ANCHORS_FILE)
  return {
    where: file,
    recorded: () => readCertificates(file),
    async record(pems) {
      const known = await readCertificates(file)
      const added = pems.filter((pem) => !known.includes(pem))
      if (added.length > 0) await replaceDurably(file, [...known, ...added].join(''))
    },
    embeddedCa: () => readCertificates(path.join(dataDir, EMBEDDED_CA_FILE)),
  }
}

/** The anchors of a store that keeps the log's identity itself (PostgreSQL), if it does. */
export function storeAnchors(store: EventStore): AnchorRecord | undefined {
  const {readTsaAnchors, addTsaAnchors, readTsaMaterial} = store
  if (!readTsaAnchors || !addTsaAnchors || !readTsaMaterial) return undefined
  return {
    where: 'the database',
    recorded: () => readTsaAnchors.call(store),
    record: (pems) => addTsaAnchors.call(store, pems),
    async embeddedCa() {
      const material = await readTsaMaterial.call(store)
      return material === undefined ? [] : splitCertificates([material.caCertPem])
    },
  }
}

/**
 * `authority`, recording an external TSA's anchors in `anchors` once it has issued a token, and
 * answering with the anchors described above.
 */
export function withKnownAnchors(authority: TimestampAuthority, anchors: AnchorRecord): TimestampAuthority {
  let recording: Promise<void> = Promise.resolve()
  const record = (pems: string[]): Promise<void> => {
    // One at a time; a failed write fails its own timestamp only, never the ones after it.
    recording = recording.catch(() => undefined).then(() => anchors.record(pems))
    return recording
  }
  return {
    kind: authority.kind,
    async timestamp(digest) {
      const issued = await authority.timestamp(digest)
      // Recorded once the TSA has issued (a refused or failed request records nothing) and before
      // the token is handed on to be stored: no stored token lacks the anchors that check it.
      if (authority.kind === 'external') {
        try {
          await record(await authority.trustAnchorsPem())
        } catch (error) {
          throw new AuditError(
            'storage_unavailable',
            `nothing was timestamped: the TSA's CA certificates could not be recorded in ${anchors.where}: ` +
              `${(error as Error).message}`,
            {cause: error},
          )
        }
      }
      return issued
    },
    async trustAnchorsPem() {
      // An external authority's anchors are already one certificate each (externalTsa splits them).
      if (authority.kind === 'external') return authority.trustAnchorsPem()
      const recorded = await anchors.recorded()
      let embedded = await anchors.embeddedCa()
      // The embedded TSA is made here only for a log that knows no other (GET /v1/timestamps/ca
      // on a fresh store answers with its CA, as before); never for one stamped externally.
      if (embedded.length === 0 && recorded.length === 0) embedded = await authority.trustAnchorsPem()
      return [...new Set([...recorded, ...embedded])]
    },
  }
}
