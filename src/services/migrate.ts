/**
 * `audit-trail migrate`: copies a data directory (the sql.js store) into an empty PostgreSQL
 * database, events in index order exactly as stored (their hashes, sequences and indexes are
 * kept, nothing is sequenced again) and the timestamps, then proves the copy: the same number of
 * events, the same Merkle root, every chain valid, the latest timestamp still valid.
 */
import {AuditError} from '../core/errors.js'
import {MerkleTree} from '../core/merkle/index.js'
import {openPostgresStore, openSqlJsStore} from '../store/index.js'
import type {EventStore} from '../store/store.js'
import {openAudit} from './audit.js'
import {toHex} from '../core/hex.js'

/** Events per append while copying. */
const COPY_BATCH = 5000

export interface MigrationProof {
  events: number
  merkle_root: string
  agents: number
  chains_valid: boolean
  timestamps: number
  /** The latest timestamp checked against the copied log; null when there is none. */
  latest_timestamp: {tree_size: number; valid: boolean; consistent: boolean} | null
}

async function rootOf(store: EventStore): Promise<string> {
  const tree = new MerkleTree()
  for (const hash of await store.eventHashes()) tree.appendHex(hash)
  return toHex(tree.root())
}

export async function migrateToPostgres(options: {
  dataDir: string
  databaseUrl: string
  onProgress?: (copied: number, total: number) => void
}): Promise<MigrationProof> {
  const source = await openSqlJsStore({dataDir: options.dataDir, create: false})
  let sourceRoot: string
  let total: number
  try {
    const target = await openPostgresStore({databaseUrl: options.databaseUrl})
    try {
      const [held, stamps] = [await target.count(), (await target.listTimestamps()).length]
      if (held > 0 || stamps > 0) {
        throw new AuditError(
          'validation_error',
          `the database already holds ${held} events and ${stamps} timestamps: migrate copies into an empty ` +
            `database only`,
        )
      }
      total = await source.count()
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
      for (const record of await source.listTimestamps()) await target.appendTimestamp(record)
      sourceRoot = await rootOf(source)
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
  // The proof reads the copy through the same services as `serve --database-url`.
  const services = await openAudit({dataDir: options.dataDir, databaseUrl: options.databaseUrl})
  try {
    const root = await services.integrity.merkleRoot()
    const chains = await services.integrity.verifyAll()
    const timestamps = await services.timestamps.list()
    const latest = timestamps.length === 0 ? undefined : await services.timestamps.verifyLatest()
    const proof: MigrationProof = {
      events: root.tree_size,
      merkle_root: root.merkle_root,
      agents: (await services.store.agentHeads()).length,
      chains_valid: chains.valid,
      timestamps: timestamps.length,
      latest_timestamp:
        latest === undefined ? null : {tree_size: latest.tree_size, valid: latest.valid, consistent: latest.consistent},
    }
    const problems = []
    if (proof.events !== total) problems.push(`${proof.events} events where the data directory holds ${total}`)
    if (proof.merkle_root !== sourceRoot)
      problems.push(`Merkle root ${proof.merkle_root} where the data directory's is ${sourceRoot}`)
    if (!proof.chains_valid) problems.push('chains that do not verify')
    if (latest !== undefined && !(latest.valid && latest.consistent))
      problems.push('a latest timestamp that does not verify')
    if (problems.length > 0)
      throw new AuditError('internal_error', `the copy differs from the data directory: ${problems.join(', ')}`)
    return proof
  } finally {
    await services.close()
  }
}
