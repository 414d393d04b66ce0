/**
 * The trust anchors of a data directory's timestamps when no external TSA is configured (the CLI on
 * a data directory, `serve` without `--tsa-url`): the embedded TSA's `tsa/ca.pem` when it exists,
 * and the CA certificates of every external TSA that issued a token for this data directory, kept
 * in EXTERNAL_ANCHORS_FILE when it did (after the TSA answered, before the token is stored).
 * Without that record, a store stamped by `serve --tsa-url --tsa-ca` and then exported or checked
 * from its data directory offered only the embedded CA (created on the spot), and the package
 * failed its own verification. Both files sit in the data
 * directory, as the embedded TSA's key does: whoever can write there could sign anyway, and
 * `--tsa-ca` is the independent check. A service configured with an external TSA trusts its
 * `--tsa-ca` only, never a file in the data directory.
 */
import {open, readFile, rename} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../core/errors.js'
import {splitCertificates} from '../../core/timestamp/index.js'
import type {TimestampAuthority} from './authority.js'

export const EXTERNAL_ANCHORS_FILE = 'external-tsa-ca.pem'
const EMBEDDED_CA_FILE = path.join('tsa', 'ca.pem')

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

/**
 * `authority`, recording an external TSA's anchors once it has issued a token, and answering with the anchors described
 * above.
 */
export function withKnownAnchors(authority: TimestampAuthority, dataDir: string): TimestampAuthority {
  const recordFile = path.join(dataDir, EXTERNAL_ANCHORS_FILE)
  let recording: Promise<void> = Promise.resolve()
  const record = (anchors: string[]): Promise<void> => {
    // One at a time; a failed write fails its own timestamp only, never the ones after it.
    recording = recording
      .catch(() => undefined)
      .then(async () => {
        const known = await readCertificates(recordFile)
        const added = anchors.filter((pem) => !known.includes(pem))
        if (added.length > 0) await replaceDurably(recordFile, [...known, ...added].join(''))
      })
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
            `nothing was timestamped: the TSA's CA certificates could not be recorded in ${recordFile}: ` +
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
      const recorded = await readCertificates(recordFile)
      let embedded = await readCertificates(path.join(dataDir, EMBEDDED_CA_FILE))
      // The embedded TSA is made here only for a store that knows no other (GET /v1/timestamps/ca
      // on a fresh store answers with its CA, as before); never for one stamped externally.
      if (embedded.length === 0 && recorded.length === 0) embedded = await authority.trustAnchorsPem()
      return [...new Set([...recorded, ...embedded])]
    },
  }
}
