/**
 * The identity `migrate` carries from a data directory into a database (docs/postgres.md, "What
 * moves with migrate"): the embedded TSA of `tsa/`, the external TSAs' CAs of
 * `external-tsa-ca.pem`, and the log key of `log/log.key`. The origin needs no copy: it is the
 * one the log's checkpoints were signed under (checkpoints.ts), and they are copied with the log.
 */
import {ed25519FromSeed, ed25519SeedFromPem} from '../core/crypto.js'
import {AuditError} from '../core/errors.js'
import {ed25519VerifierKey} from '../core/note/index.js'
import type {IdentityConflict, LogIdentityMaterial} from '../store/identity.js'
import {readLogKey} from '../store/sqljs/log-key.js'
import {directoryAnchors, readEmbeddedTsa} from './tsa/index.js'

export async function readDirectoryIdentity(dataDir: string): Promise<LogIdentityMaterial> {
  const identity: LogIdentityMaterial = {tsaAnchors: await directoryAnchors(dataDir).recorded()}
  const tsa = await readEmbeddedTsa(dataDir)
  if (tsa !== undefined) identity.tsa = tsa
  const logKeyPem = await readLogKey(dataDir)
  if (logKeyPem !== undefined) identity.logKeyPem = logKeyPem
  return identity
}

/** The signed-note verifier key of `logKeyPem` under `origin`. */
export function verifierKeyOf(logKeyPem: string, origin: string): string {
  let publicKey
  try {
    publicKey = ed25519FromSeed(ed25519SeedFromPem(logKeyPem)).publicKey
  } catch (error) {
    throw new AuditError(
      'validation_error',
      `the data directory's log key is not an Ed25519 key: ${(error as Error).message}`,
    )
  }
  return ed25519VerifierKey(origin, publicKey)
}

/** One sentence for a database that holds another log's identity: what differs, and what to do. */
export function conflictMessage(conflict: IdentityConflict): string {
  const parts = conflict.join(' and ')
  return (
    `the database already holds another ${parts} than the data directory's, so it belongs to another log: ` +
    `migrate into a new database (createdb) and give its URL with --database-url`
  )
}
