/**
 * Timestamping of the Merkle root (CONTRACT.md section 4, Timestamping): issue through the
 * configured TSA, store durably, list, and verify the latest one cryptographically and against the
 * tree recomputed from stored events.
 */
import {AuditError} from '../core/errors.js'
import type {MerkleTree} from '../core/merkle/index.js'
import {unsignedFieldMismatch, verifyTimestampToken, type TokenVerification} from '../core/timestamp/index.js'
import type {TimestampRecord} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {TimestampAuthority} from './tsa/index.js'
import type {Feed} from './feed.js'
import type {IntegrityService} from './integrity.js'

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

export interface TimestampVerification {
  valid: boolean
  merkle_root: string
  tsa_time: string
  tree_size: number
  error: string
  current_root_matches: boolean
  consistent: boolean
}

export class TimestampService {
  private issuing: Promise<TimestampRecord> | undefined

  constructor(private readonly options: {store: EventStore; tree: MerkleTree; integrity: IntegrityService; authority: TimestampAuthority; feed?: Feed}) {}

  get kind(): 'embedded' | 'external' {
    return this.options.authority.kind
  }

  /** Timestamps the current root; concurrent calls share one request to the TSA. */
  issue(): Promise<TimestampRecord> {
    this.issuing ??= this.issueNow().finally(() => {
      this.issuing = undefined
    })
    return this.issuing
  }

  private async issueNow(): Promise<TimestampRecord> {
    const {tree, authority, store, feed} = this.options
    const size = tree.size
    const root = tree.rootAt(size)
    let issued
    try {
      issued = await authority.timestamp(root)
    } catch (error) {
      if (error instanceof AuditError) throw error
      throw new AuditError('tsa_unavailable', `the timestamp authority failed: ${(error as Error).message}`, {cause: error})
    }
    const record: TimestampRecord = {
      merkle_root: hex(root),
      tree_size: size,
      timestamp: issued.genTime.toISOString(),
      tsa: issued.tsaName,
      token: Buffer.from(issued.token).toString('base64'),
    }
    await store.appendTimestamp(record)
    feed?.emit('timestamp', {merkle_root: record.merkle_root, tree_size: record.tree_size, timestamp: record.timestamp, tsa: record.tsa})
    return record
  }

  async list(): Promise<Array<Omit<TimestampRecord, 'token'>>> {
    return (await this.options.store.listTimestamps()).map(({merkle_root, timestamp, tsa, tree_size}) => ({merkle_root, timestamp, tsa, tree_size}))
  }

  async latest(): Promise<TimestampRecord | undefined> {
    return (await this.options.store.listTimestamps()).at(-1)
  }

  /** The latest timestamp whose tree is no larger than `treeSize` (for the evidence package). */
  async latestAtOrBefore(treeSize: number): Promise<TimestampRecord | undefined> {
    return (await this.options.store.listTimestamps()).filter((t) => t.tree_size <= treeSize).at(-1)
  }

  trustAnchorsPem(): Promise<string[]> {
    return this.options.authority.trustAnchorsPem()
  }

  /**
   * The latest timestamp and whether its token verifies (signature, certificate, imprint); no tree
   * work. The certificate is checked against `trustAnchorsPem` when given (`timestamps verify
   * --tsa-ca`), else against the configured TSA's.
   */
  async checkLatestToken(trustAnchorsPem?: string[]): Promise<{latest: TimestampRecord; check: TokenVerification} | undefined> {
    const latest = await this.latest()
    if (!latest) return undefined
    const check = await verifyTimestampToken(Buffer.from(latest.token, 'base64'), {
      digest: Buffer.from(latest.merkle_root, 'hex'),
      trustAnchorsPem: trustAnchorsPem ?? (await this.trustAnchorsPem()),
    })
    return {latest, check: {...check, ...unsignedMismatch(latest, check)}}
  }

  /** GET /v1/timestamps/verify: the token, and its tree against the tree recomputed from storage. */
  async verifyLatest(trustAnchorsPem?: string[]): Promise<TimestampVerification> {
    const currentRoot = hex(this.options.tree.root())
    const checked = await this.checkLatestToken(trustAnchorsPem)
    if (!checked) {
      return {valid: false, merkle_root: '', tsa_time: '', tree_size: 0, error: 'no timestamp has been issued yet', current_root_matches: false, consistent: false}
    }
    const {latest, check} = checked
    return {
      valid: check.valid,
      merkle_root: latest.merkle_root,
      // Only the signed time: the stored one beside the token is what a forger would edit.
      tsa_time: check.genTime ?? '',
      tree_size: latest.tree_size,
      error: check.error,
      current_root_matches: currentRoot === latest.merkle_root,
      consistent: await this.options.integrity.isConsistentWithStorage(latest.tree_size, latest.merkle_root),
    }
  }
}

/**
 * The time and signer GET /v1/timestamps lists are stored beside the token, unsigned: a record
 * whose token verifies but whose stored time or signer differ from the token's was edited, and
 * does not verify (as the evidence package's timestamp member, core/evidence/verify.ts).
 */
function unsignedMismatch(record: TimestampRecord, check: TokenVerification): {valid: false; error: string} | undefined {
  const mismatch = check.valid ? unsignedFieldMismatch(record, check) : undefined
  if (!mismatch) return undefined
  const what = mismatch.field === 'timestamp' ? 'time' : 'signer'
  return {valid: false, error: `the stored ${what} ${JSON.stringify(mismatch.claimed)} differs from the one signed in the token (${JSON.stringify(mismatch.signed)})`}
}
