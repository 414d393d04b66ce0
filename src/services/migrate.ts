/**
 * `audit-trail migrate`: copies a data directory (the sql.js store) into an empty PostgreSQL
 * database: the log's identity first (embedded TSA, external TSAs' CAs, log key:
 * migrate-identity.ts), then the events in index order exactly as stored (their hashes, sequences
 * and indexes are kept, nothing is sequenced again), the timestamps and the checkpoints with their
 * cosignatures. Then it proves the copy: the same number of events, the same Merkle root, every
 * chain valid, the latest timestamp valid against the copied TSA, the latest checkpoint valid
 * against the copied log key, and the first checkpoint after the move one a witness accepts.
 */
import {AuditError} from '../core/errors.js'
import {MerkleTree} from '../core/merkle/index.js'
import {openPostgresStore, openSqlJsStore, TrailDirectories} from '../store/index.js'
import type {CheckpointRecord} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import {openAudit} from './audit.js'
import {toHex} from '../core/hex.js'
import {conflictMessage, readDirectoryIdentity} from './migrate-identity.js'
import {proveCheckpoints, type CheckpointProof} from './migrate-proof.js'

/** Events per append while copying. */
const COPY_BATCH = 5000

export interface MigrationProof extends Omit<CheckpointProof, 'problems'> {
  events: number
  merkle_root: string
  agents: number
  chains_valid: boolean
  timestamps: number
  checkpoints: number
  /** What of the log's identity was copied; `log_key` is its verifier key (`keys log`), null when it had none. */
  identity: {embedded_tsa: boolean; external_tsa_certificates: number; log_key: string | null}
  /** The latest timestamp checked against the copied log and TSA; null when there is none. */
  latest_timestamp: {tree_size: number; valid: boolean; consistent: boolean} | null
}

async function rootOf(store: EventStore): Promise<string> {
  const tree = new MerkleTree()
  for (const hash of await store.eventHashes()) tree.appendHex(hash)
  return toHex(tree.root())
}

const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/** Refuses a database that holds any of a log already, in one sentence. */
async function assertEmpty(target: EventStore): Promise<void> {
  const held = [
    counted(await target.count(), 'event'),
    counted((await target.listTimestamps()).length, 'timestamp'),
    counted((await target.listCheckpoints()).length, 'checkpoint'),
  ].filter((part) => !part.startsWith('0 '))
  if (held.length === 0) return
  const list = held.length === 1 ? held[0] : `${held.slice(0, -1).join(', ')} and ${held.at(-1)}`
  throw new AuditError(
    'validation_error',
    `the database already holds ${list}: migrate copies into an empty database only; create a new one ` +
      `(createdb) and give its URL with --database-url`,
  )
}

interface MigrateOptions {
  dataDir: string
  databaseUrl: string
  onProgress?: (copied: number, total: number) => void
}

/** What the copy took from the data directory, for the proof to compare the database with. */
interface Copied {
  total: number
  sourceRoot: string
  identity: Awaited<ReturnType<typeof readDirectoryIdentity>>
  checkpoints: CheckpointRecord[]
}

/** The events in batches of COPY_BATCH, with the progress after each. */
async function copyEvents(source: EventStore, target: EventStore, total: number, options: MigrateOptions) {
  let batch = []
  let copied = 0
  options.onProgress?.(0, total)
  for await (const event of source.scanEvents({toIndex: total})) {
    batch.push(event)
    if (batch.length === COPY_BATCH) {
      await target.appendEvents(batch)
      copied += batch.length
      options.onProgress?.(copied, total)
      batch = []
    }
  }
  if (batch.length > 0) await target.appendEvents(batch)
  options.onProgress?.(total, total)
}

/** Trail default alone is copied (docs/trails.md, Upgrading): a data directory with others is not moved in part. */
async function assertDefaultOnly(dataDir: string): Promise<void> {
  const others = (await new TrailDirectories(dataDir).list()).map((trail) => trail.name)
  if (others.length === 0) return
  throw new AuditError(
    'validation_error',
    `the data directory holds trails besides default (${others.join(', ')}): migrate copies trail default ` +
      `only, and moves nothing rather than part of the service`,
  )
}

/** The log's identity, events, timestamps and checkpoints copied into an empty database. */
async function copyToPostgres(options: MigrateOptions): Promise<Copied> {
  const source = await openSqlJsStore({dataDir: options.dataDir, create: false})
  try {
    await assertDefaultOnly(options.dataDir)
    const identity = await readDirectoryIdentity(options.dataDir)
    const checkpoints = await source.listCheckpoints()
    const target = await openPostgresStore({databaseUrl: options.databaseUrl})
    try {
      await assertEmpty(target)
      // All of the identity or none of it, before any event: a refused database is left as it was.
      const conflict = await target.adoptIdentity(identity)
      if (conflict.length > 0) throw new AuditError('validation_error', conflictMessage(conflict))
      const total = await source.count()
      await copyEvents(source, target, total, options)
      for (const record of await source.listTimestamps()) await target.appendTimestamp(record)
      for (const record of checkpoints) await target.appendCheckpoint(record)
      await copyForwardingPositions(source, target)
      return {total, sourceRoot: await rootOf(source), identity, checkpoints}
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}

export async function migrateToPostgres(options: MigrateOptions): Promise<MigrationProof> {
  return proveCopy(options, await copyToPostgres(options))
}

/** The copy read back through the services of `serve --database-url`, compared with the data directory's. */
async function proveCopy(
  options: MigrateOptions,
  {total, sourceRoot, identity, checkpoints}: Copied,
): Promise<MigrationProof> {
  // The proof reads the copy through the same services as `serve --database-url`: the anchors and
  // the log key it uses are the database's, never the data directory's.
  const services = await openAudit({dataDir: options.dataDir, databaseUrl: options.databaseUrl})
  try {
    const root = await services.integrity.merkleRoot()
    const chains = await services.integrity.verifyAll()
    const timestamps = await services.timestamps.list()
    const latest = timestamps.length === 0 ? undefined : await services.timestamps.verifyLatest()
    const problems = []
    if (root.tree_size !== total) problems.push(`${root.tree_size} events where the data directory holds ${total}`)
    if (root.merkle_root !== sourceRoot)
      problems.push(`Merkle root ${root.merkle_root} where the data directory's is ${sourceRoot}`)
    if (!chains.valid) problems.push('chains that do not verify')
    if (latest !== undefined && !(latest.valid && latest.consistent))
      problems.push(
        `a latest timestamp that does not verify against the copied TSA (${latest.error || 'inconsistent'}): the ` +
          `data directory's tsa/ or external-tsa-ca.pem is not the TSA that signed it`,
      )
    // Only a copy that proves equal so far gets its first checkpoint after the move signed.
    const signed =
      problems.length > 0 ? undefined : await proveCheckpoints(services, checkpoints.at(-1), identity.logKeyPem)
    problems.push(...(signed?.problems ?? []))
    if (problems.length > 0 || signed === undefined)
      throw new MigrationMismatch(
        `the copy does not prove equal to the data directory: ${problems.join('; ')}; the data directory is ` +
          `unchanged: drop the database (dropdb), fix the cause and migrate again`,
      )
    const {problems: _none, ...checked} = signed
    return {
      events: root.tree_size,
      merkle_root: root.merkle_root,
      agents: (await services.store.agentHeads()).length,
      chains_valid: chains.valid,
      timestamps: timestamps.length,
      checkpoints: checkpoints.length,
      identity: {
        embedded_tsa: identity.tsa !== undefined,
        external_tsa_certificates: identity.tsaAnchors.length,
        log_key: identity.logKeyPem === undefined ? null : (await services.checkpoints.identity()).verifierKey,
      },
      latest_timestamp:
        latest === undefined ? null : {tree_size: latest.tree_size, valid: latest.valid, consistent: latest.consistent},
      ...checked,
    }
  } finally {
    await services.close()
  }
}

/** The copy was made but does not prove equal: a failed check (exit 1), not a usage error. */
/**
 * The forwarding positions go with the events (docs/forwarding.md), so that a `serve` on the
 * database goes on from where the data directory's stopped rather than sending everything again.
 */
async function copyForwardingPositions(source: EventStore, target: EventStore): Promise<void> {
  const holder = 'audit-trail migrate'
  for (const position of await source.forwarding.list()) {
    await target.forwarding.claim(position.destination, holder, 60_000)
    await target.forwarding.save(position, holder)
    await target.forwarding.release(position.destination, holder)
  }
}

export class MigrationMismatch extends Error {
  override name = 'MigrationMismatch'
}
