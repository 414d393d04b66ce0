/**
 * The trust anchors a data directory's timestamps verify against, whichever TSA issued them: the
 * CA certificates of the configured external TSA, those of every external TSA that ever issued a
 * token for this data directory (kept in EXTERNAL_ANCHORS_FILE when it did), and the embedded
 * TSA's `tsa/ca.pem` when it exists. Without the record, a store stamped by `serve --tsa-url
 * --tsa-ca` and then exported or checked from its data directory offered only the embedded CA
 * (created on the spot), and the package failed its own verification.
 */
import {open, readFile, rename} from 'node:fs/promises'
import path from 'node:path'
import {splitCertificates} from '../../core/timestamp/index.js'
import type {TimestampAuthority} from './authority.js'

export const EXTERNAL_ANCHORS_FILE = 'external-tsa-ca.pem'
const EMBEDDED_CA_FILE = path.join('tsa', 'ca.pem')

async function readCertificates(file: string): Promise<string[]> {
  try {
    return splitCertificates([await readFile(file, 'utf8')])
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
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

/** `authority`, recording an external TSA's anchors once it has issued a token, and answering with every anchor known. */
export function withKnownAnchors(authority: TimestampAuthority, dataDir: string): TimestampAuthority {
  const recordFile = path.join(dataDir, EXTERNAL_ANCHORS_FILE)
  let recording: Promise<void> = Promise.resolve()
  const record = (anchors: string[]) => {
    recording = recording.then(async () => {
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
      if (authority.kind === 'external') await record(splitCertificates(await authority.trustAnchorsPem()))
      return issued
    },
    async trustAnchorsPem() {
      const configured = authority.kind === 'external' ? splitCertificates(await authority.trustAnchorsPem()) : []
      const recorded = await readCertificates(recordFile)
      let embedded = await readCertificates(path.join(dataDir, EMBEDDED_CA_FILE))
      // The embedded TSA is made here only for a store that knows no other (GET /v1/timestamps/ca
      // on a fresh store answers with its CA, as before); never for one stamped externally.
      if (embedded.length === 0 && authority.kind === 'embedded' && recorded.length === 0) embedded = await authority.trustAnchorsPem()
      return [...new Set([...configured, ...recorded, ...embedded])]
    },
  }
}
