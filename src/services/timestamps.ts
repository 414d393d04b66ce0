/**
 * Timestamping of the Merkle root (docs/api.md, Timestamping): issue through the
 * configured TSA, store durably, list, and verify the latest one cryptographically and the whole
 * series against the tree recomputed from stored events. A timestamp is issued only over a tree
 * that extends every timestamp since the last reset (signed-history.ts); `reset` starts over.
 */
import {AuditError} from '../core/errors.js'
import {unsignedFieldMismatch, verifyTimestampToken, type TokenVerification} from '../core/timestamp/index.js'
import type {TimestampRecord} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {TreeView} from './tree-view.js'
import type {TimestampAuthority} from './tsa/index.js'
import type {Feed} from './feed.js'
import type {IntegrityService} from './integrity.js'
import type {HistoryRewrite, SignedHistory, SignedStatement} from './signed-history.js'
import {toHex} from '../core/hex.js'

export interface TimestampVerification {
  valid: boolean
  merkle_root: string
  tsa_time: string
  tree_size: number
  error: string
  current_root_matches: boolean
  consistent: boolean
  /** Timestamps checked against the stored events: every one since the latest reset (or all). */
  timestamps_checked: number
  /** Each checked timestamp's tree is a prefix of the next one's and of the current tree. */
  series_consistent: boolean
  /** The signed time of the earliest checked timestamp the stored events no longer extend. */
  rewritten_since: string | null
  /** Why the series does not hold, one sentence; '' when it holds. */
  series_error: string
  /** The latest `timestamps reset`, where the checked series starts; null when there was none. */
  last_reset: {timestamp: string; tree_size: number; merkle_root: string; reason: string} | null
}

const KIND = 'timestamp'
const REMEDY =
  'if the data directory was restored on purpose, start signed history over with ' +
  '`audit-trail timestamps reset --reason "..."` (POST /v1/timestamps/reset)'
/** A reset reason is one line a person wrote. */
const MAX_REASON_LENGTH = 1000

function statementOf(record: TimestampRecord): SignedStatement {
  return {kind: KIND, tree_size: record.tree_size, root: record.merkle_root, signed_at: record.timestamp}
}

/** The timestamps from the latest reset on (all when there was none), oldest first. */
function sinceLastReset(records: TimestampRecord[]): TimestampRecord[] {
  let reset = records.length - 1
  while (reset >= 0 && records[reset]!.reset_reason === undefined) reset--
  return reset < 0 ? records : records.slice(reset)
}

export class TimestampService {
  private issuing: Promise<TimestampRecord> | undefined

  constructor(
    private readonly options: {
      store: EventStore
      tree: TreeView
      integrity: IntegrityService
      history: SignedHistory
      authority: TimestampAuthority
      feed?: Feed
    },
  ) {}

  get kind(): 'embedded' | 'external' {
    return this.options.authority.kind
  }

  /**
   * Timestamps the current root; concurrent calls share one request to the TSA. Refused (409
   * conflict) when the current tree does not extend every timestamp since the latest reset.
   */
  issue(): Promise<TimestampRecord> {
    this.issuing ??= this.issueNow().finally(() => {
      this.issuing = undefined
    })
    return this.issuing
  }

  /**
   * `timestamps reset --reason`: timestamps the current tree as the new start of signed history,
   * recording why. Refused (409) while history still extends every timestamp (nothing to start
   * over), so that it is never done by accident; the timestamps before it stay listed.
   */
  async reset(reason: unknown): Promise<TimestampRecord> {
    const text = typeof reason === 'string' ? reason.trim() : ''
    if (text === '' || text.length > MAX_REASON_LENGTH || /[\u0000-\u001f\u007f]/.test(text)) {
      throw new AuditError('validation_error', 'a reset needs a reason: one line of 1 to 1000 characters', {
        details: [{field: 'reason', message: 'must be one line of 1 to 1000 characters'}],
      })
    }
    await this.issuing?.catch(() => undefined)
    const rewrite = await this.checkHistory()
    if (!rewrite) {
      const message = 'signed history is intact: the stored events extend every timestamp; nothing to start over'
      throw new AuditError('conflict', message)
    }
    const record = await this.issueNow(text)
    this.options.history.startOver(KIND)
    return record
  }

  /** Whether the stored events extend every timestamp since the latest reset; remembered for /healthz. */
  async checkHistory(): Promise<HistoryRewrite | undefined> {
    const records = sinceLastReset(await this.options.store.listTimestamps())
    return this.options.history.check(KIND, records.map(statementOf), await this.options.tree.size())
  }

  private async issueNow(resetReason?: string): Promise<TimestampRecord> {
    const {tree, authority, store, feed, history} = this.options
    const size = await tree.size()
    if (resetReason === undefined) {
      const previous = sinceLastReset(await store.listTimestamps())
      await history.assertExtends(KIND, previous.map(statementOf), size, REMEDY)
    }
    const root = await tree.read((t) => t.rootAt(size), size)
    let issued
    try {
      issued = await authority.timestamp(root)
    } catch (error) {
      if (error instanceof AuditError) throw error
      throw new AuditError('tsa_unavailable', `the timestamp authority failed: ${(error as Error).message}`, {
        cause: error,
      })
    }
    const record: TimestampRecord = {
      merkle_root: toHex(root),
      tree_size: size,
      timestamp: issued.genTime.toISOString(),
      tsa: issued.tsaName,
      token: Buffer.from(issued.token).toString('base64'),
    }
    if (resetReason !== undefined) record.reset_reason = resetReason
    await store.appendTimestamp(record)
    const {token: _token, ...announced} = record
    feed?.emit('timestamp', announced)
    return record
  }

  /** Oldest first; a reset carries its `reset_reason`. */
  async list(): Promise<Array<Omit<TimestampRecord, 'token'>>> {
    return (await this.options.store.listTimestamps()).map(({token: _token, ...listed}) => listed)
  }

  async latest(): Promise<TimestampRecord | undefined> {
    return (await this.options.store.listTimestamps()).at(-1)
  }

  trustAnchorsPem(): Promise<string[]> {
    return this.options.authority.trustAnchorsPem()
  }

  /**
   * The latest timestamp and whether its token verifies (signature, certificate, imprint); no tree
   * work. The certificate is checked against `trustAnchorsPem` when given (`timestamps verify
   * --tsa-ca`), else against the configured TSA's.
   */
  async checkLatestToken(
    trustAnchorsPem?: string[],
  ): Promise<{latest: TimestampRecord; check: TokenVerification} | undefined> {
    const latest = await this.latest()
    if (!latest) return undefined
    const check = await verifyTimestampToken(Buffer.from(latest.token, 'base64'), {
      digest: Buffer.from(latest.merkle_root, 'hex'),
      trustAnchorsPem: trustAnchorsPem ?? (await this.trustAnchorsPem()),
    })
    return {latest, check: {...check, ...unsignedMismatch(latest, check)}}
  }

  /**
   * GET /v1/timestamps/verify: the latest token, its tree against the tree recomputed from
   * storage, and the series since the latest reset: each timestamp's tree a prefix of the next
   * one's and of the current tree.
   */
  async verifyLatest(trustAnchorsPem?: string[]): Promise<TimestampVerification> {
    const [currentRoot, size] = await this.options.tree.read((tree, size) => [toHex(tree.rootAt(size)), size] as const)
    const records = await this.options.store.listTimestamps()
    const checked = await this.checkLatestToken(trustAnchorsPem)
    if (!checked) {
      return {
        valid: false,
        merkle_root: '',
        tsa_time: '',
        tree_size: 0,
        error: 'no timestamp has been issued yet',
        current_root_matches: false,
        consistent: false,
        timestamps_checked: 0,
        series_consistent: true,
        rewritten_since: null,
        series_error: '',
        last_reset: null,
      }
    }
    const {latest, check} = checked
    const series = sinceLastReset(records)
    const rewrite = await this.options.history.check(KIND, series.map(statementOf), size)
    const shrinking = series.findIndex((record, i) => i > 0 && record.tree_size < series[i - 1]!.tree_size)
    const reset = series[0]?.reset_reason === undefined ? undefined : series[0]
    return {
      valid: check.valid,
      merkle_root: latest.merkle_root,
      // Only the signed time: the stored one beside the token is what a forger would edit.
      tsa_time: check.genTime ?? '',
      tree_size: latest.tree_size,
      error: check.error,
      current_root_matches: currentRoot === latest.merkle_root,
      consistent: await this.options.integrity.isConsistentWithStorage(latest.tree_size, latest.merkle_root),
      timestamps_checked: series.length,
      series_consistent: rewrite === undefined && shrinking < 0,
      rewritten_since: rewrite?.statement.signed_at ?? null,
      series_error:
        rewrite?.message ??
        (shrinking < 0 ? '' : `the timestamp of ${series[shrinking]!.timestamp} covers fewer events than the previous`),
      last_reset:
        reset === undefined
          ? null
          : {
              timestamp: reset.timestamp,
              tree_size: reset.tree_size,
              merkle_root: reset.merkle_root,
              reason: reset.reset_reason!,
            },
    }
  }
}

/**
 * The time and signer GET /v1/timestamps lists are stored beside the token, unsigned: a record
 * whose token verifies but whose stored time or signer differ from the token's was edited, and
 * does not verify (as the evidence package's timestamp member, core/evidence/verify.ts).
 */
function unsignedMismatch(
  record: TimestampRecord,
  check: TokenVerification,
): {valid: false; error: string} | undefined {
  const mismatch = check.valid ? unsignedFieldMismatch(record, check) : undefined
  if (!mismatch) return undefined
  const what = mismatch.field === 'timestamp' ? 'time' : 'signer'
  return {
    valid: false,
    error:
      `the stored ${what} ${JSON.stringify(mismatch.claimed)} differs from the one signed in the token ` +
      `(${JSON.stringify(mismatch.signed)})`,
  }
}
