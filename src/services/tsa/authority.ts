/**
 * A timestamp authority as the services see it: something that signs an RFC 3161 token for a
 * 32-byte digest, and the trust anchors an auditor needs to check its tokens.
 */
import type {IssuedToken} from '../../core/timestamp/index.js'

export interface TimestampAuthority {
  kind: 'embedded' | 'external'
  /** Throws AuditError('tsa_unavailable') when no token can be had. */
  timestamp(digest: Uint8Array): Promise<IssuedToken>
  /** PEM certificates, one per element. */
  trustAnchorsPem(): Promise<string[]>
}
