/**
 * What makes a log the same log wherever it is stored (docs/postgres.md, "The log's identity"):
 * the embedded TSA that signs its timestamps, the CA certificates of the external TSAs that signed
 * some of them, and the Ed25519 key that signs its checkpoints. `migrate` carries it from a data
 * directory into a database.
 */
import type {TsaMaterial} from '../core/timestamp/index.js'

export interface LogIdentityMaterial {
  /** The embedded TSA (CA certificate, TSA certificate and key), when the log has one. */
  tsa?: TsaMaterial
  /** PEM CA certificates of the external TSAs that issued tokens for the log, one per element. */
  tsaAnchors: string[]
  /** The log key (Ed25519 PKCS#8 PEM), when the log has one. */
  logKeyPem?: string
}

/** What a store holds already that differs from the identity offered to it: named for a message. */
export type IdentityConflict = Array<'embedded TSA' | 'log key'>
