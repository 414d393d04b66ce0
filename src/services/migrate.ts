/**
 * `audit-trail migrate`: copies a data directory (the sql.js store) into a PostgreSQL database,
 * every trail of it (docs/trails.md, Upgrading), or the one `--trail` names. Trail default first:
 * the service's identity (embedded TSA, external TSAs' CAs, default's log key: migrate-identity.ts),
 * then its events in index order exactly as stored (their hashes, sequences and indexes are kept,
 * nothing is sequenced again), the timestamps and the checkpoints with their cosignatures
 * (migrate-copy.ts); then each other trail with its own log key and seal (migrate-trails.ts).
 * Then it proves each copy: the same number of events, the same Merkle root, every chain valid,
 * the latest timestamp valid against the copied TSA, the latest checkpoint valid against the
 * copied log key, and the first checkpoint after the move one a witness accepts.
 */
import {CodedError} from '../core/coded-error.js'
import {AuditError} from '../core/errors.js'
import {DEFAULT_TRAIL} from '../core/trail/name.js'
import {openPostgresStore, openSqlJsStore} from '../store/index.js'
import type {EventStore} from '../store/store.js'
import {readTrailFile} from '../store/sqljs/trail-file.js'
import type {AuditServices} from './audit.js'
import {assertEmpty, copyLog, rootOf, type Progress} from './migrate-copy.js'
import {conflictMessage, readDirectoryIdentity} from './migrate-identity.js'
import {proveCheckpoints, type CheckpointProof} from './migrate-proof.js'
import {assertTrailsFree, copyTrail, trailsToMove, type CopiedTrail} from './migrate-trails.js'
import {openTrails} from './trail-registry.js'

/** What `migrate` proves of one trail's copy. */
export interface TrailProof extends Omit<CheckpointProof, 'problems'> {
  trail: string
  origin: string | null
  sealed: boolean
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

/** The first trail moved (default, unless `--trail` named another) at the top, as before; each in `trails`. */
export interface MigrationProof extends TrailProof {
  trails: TrailProof[]
}

interface MigrateOptions {
  dataDir: string
  databaseUrl: string
  /** Move only this trail; every trail when undefined. */
  trail?: string
  onProgress?: (copied: number, total: number, trail: string) => void
}

/** Trail default's copy from `source`: the service's identity with it, into an empty database. */
async function copyDefault(options: MigrateOptions, source: EventStore, progress: Progress): Promise<CopiedTrail> {
  const identity = await readDirectoryIdentity(options.dataDir)
  const target = await openPostgresStore({databaseUrl: options.databaseUrl})
  try {
    await assertEmpty(target)
    // All of the identity or none of it, before any event: a refused database is left as it was.
    const conflict = await target.adoptIdentity(identity)
    if (conflict.length > 0) throw new AuditError('validation_error', conflictMessage(conflict))
    const total = await copyLog(source, target, progress)
    // Default can be sealed too (its trail.json, docs/trails.md, Storage): sealed last, at its time.
    const sealed = await source.sealed()
    if (sealed) await target.seal((await readTrailFile(options.dataDir))?.sealed_at)
    const checkpoints = await source.listCheckpoints()
    return {name: DEFAULT_TRAIL, total, sourceRoot: await rootOf(source), identity, checkpoints, sealed}
  } finally {
    await target.close()
  }
}

/** Every trail to move, copied: the refusals of all of them made before any is written. */
async function copyToPostgres(options: MigrateOptions): Promise<CopiedTrail[]> {
  // Default's store holds the data directory's lock throughout (docs/trails.md, Storage), also when
  // --trail moves another: no process writes to the data directory while it is copied.
  const source = await openSqlJsStore({dataDir: options.dataDir, create: false})
  try {
    const withDefault = options.trail === undefined || options.trail === DEFAULT_TRAIL
    const others = options.trail === DEFAULT_TRAIL ? [] : await trailsToMove(options.dataDir, options.trail)
    await assertTrailsFree(options.dataDir, options.databaseUrl, others)
    const progress = (trail: string) => (copied: number, total: number) => options.onProgress?.(copied, total, trail)
    const copied = withDefault ? [await copyDefault(options, source, progress(DEFAULT_TRAIL))] : []
    const service = await serviceIdentity(options, withDefault)
    for (const trail of others)
      copied.push(await copyTrail({...options, onProgress: progress(trail.name)}, trail, service))
    return copied
  } finally {
    await source.close()
  }
}

/**
 * The service's TSA, which every trail's timestamps verify against: moved with default, else
 * adopted alone (without default's log key) where the database has none, refused where it differs.
 */
async function serviceIdentity(options: MigrateOptions, moved: boolean) {
  const {logKeyPem: _default, ...service} = await readDirectoryIdentity(options.dataDir)
  if (moved) return service
  const target = await openPostgresStore({databaseUrl: options.databaseUrl})
  try {
    const conflict = await target.adoptIdentity(service)
    if (conflict.length > 0) throw new AuditError('validation_error', conflictMessage(conflict))
  } finally {
    await target.close()
  }
  return service
}

export async function migrateToPostgres(options: MigrateOptions): Promise<MigrationProof> {
  const copied = await copyToPostgres(options)
  // The proof reads the copy through the same services as `serve --database-url`: the anchors and
  // the log keys it uses are the database's, never the data directory's.
  const trails = await openTrails({dataDir: options.dataDir, databaseUrl: options.databaseUrl})
  try {
    const proofs: TrailProof[] = []
    for (const trail of copied) proofs.push(await proveCopy(await trails.open(trail.name), trail))
    return {...proofs[0]!, trails: proofs}
  } finally {
    await trails.close()
  }
}

/** What differs between the copy of `copied` and the data directory's, one phrase each. */
async function problemsOf(services: AuditServices, {total, sourceRoot, sealed}: CopiedTrail) {
  const root = await services.integrity.merkleRoot()
  const chains = await services.integrity.verifyAll()
  const timestamps = await services.timestamps.list()
  const latest = timestamps.length === 0 ? undefined : await services.timestamps.verifyLatest()
  const problems = []
  if (root.tree_size !== total) problems.push(`${root.tree_size} events where the data directory holds ${total}`)
  if (root.merkle_root !== sourceRoot)
    problems.push(`Merkle root ${root.merkle_root} where the data directory's is ${sourceRoot}`)
  if (!chains.valid) problems.push('chains that do not verify')
  if ((await services.store.sealed()) !== sealed) problems.push(sealed ? 'no seal' : 'a seal')
  if (latest !== undefined && !(latest.valid && latest.consistent))
    problems.push(
      `a latest timestamp that does not verify against the copied TSA (${latest.error || 'inconsistent'}): the ` +
        `data directory's tsa/ or external-tsa-ca.pem is not the TSA that signed it`,
    )
  return {root, chains, timestamps, latest, problems}
}

/** The copy read back through the services of `serve --database-url`, compared with the data directory's. */
async function proveCopy(services: AuditServices, copied: CopiedTrail): Promise<TrailProof> {
  const {identity, checkpoints} = copied
  const {root, chains, timestamps, latest, problems} = await problemsOf(services, copied)
  // Only a copy that proves equal so far gets its first checkpoint after the move signed.
  const signed =
    problems.length > 0 ? undefined : await proveCheckpoints(services, checkpoints.at(-1), identity.logKeyPem)
  problems.push(...(signed?.problems ?? []))
  const which = copied.name === DEFAULT_TRAIL ? '' : ` of trail ${copied.name}`
  if (problems.length > 0 || signed === undefined)
    throw new MigrationMismatch(
      `the copy${which} does not prove equal to the data directory: ${problems.join('; ')}; the data directory ` +
        `is unchanged: drop the database (dropdb), fix the cause and migrate again`,
    )
  const {problems: _none, ...checked} = signed
  // Asked only of a log with a key: identity() would make one for a log that has none yet.
  const own = identity.logKeyPem === undefined ? undefined : await services.checkpoints.identity()
  return {
    trail: copied.name,
    origin: copied.origin ?? own?.origin ?? null,
    sealed: copied.sealed,
    events: root.tree_size,
    merkle_root: root.merkle_root,
    agents: (await services.store.agentHeads()).length,
    chains_valid: chains.valid,
    timestamps: timestamps.length,
    checkpoints: checkpoints.length,
    identity: {
      embedded_tsa: identity.tsa !== undefined,
      external_tsa_certificates: identity.tsaAnchors.length,
      log_key: own?.verifierKey ?? null,
    },
    latest_timestamp:
      latest === undefined ? null : {tree_size: latest.tree_size, valid: latest.valid, consistent: latest.consistent},
    ...checked,
  }
}

/** The copy was made but does not prove equal: a failed check (exit 1), not a usage error. */
export class MigrationMismatch extends CodedError<'copy_differs'> {
  override name = 'MigrationMismatch'
  constructor(message: string) {
    super('copy_differs', message)
  }
}
