/**
 * The trails besides `default` that `migrate` moves (docs/trails.md, Upgrading): each trail
 * directory `trails/NAME/` becomes the trail NAME of the database, registered under the origin of
 * its `trail.json`, with its own log key, events, timestamps, checkpoints and seal; the TSA stays
 * the service's (default's). Every refusal is made before anything is written, as for default.
 */
import path from 'node:path'
import {AuditError} from '../core/errors.js'
import type {CheckpointRecord} from '../core/types.js'
import {
  openPostgresStore,
  openPostgresTrailCatalog,
  openSqlJsStore,
  TrailDirectories,
  type TrailFile,
  type TrailRow,
} from '../store/index.js'
import type {LogIdentityMaterial} from '../store/identity.js'
import {readLogKey} from '../store/sqljs/log-key.js'
import {assertEmpty, copyLog, heldBy, listed, rootOf, type Progress} from './migrate-copy.js'
import {conflictMessage} from './migrate-identity.js'

/** What the copy of one trail took from the data directory, for the proof to compare with. */
export interface CopiedTrail {
  name: string
  /** The origin its `trail.json` records; undefined for default, whose origin its checkpoints carry. */
  origin?: string
  total: number
  sourceRoot: string
  identity: LogIdentityMaterial
  checkpoints: CheckpointRecord[]
  sealed: boolean
}

/** The data directory's trails but default to move: every one, or `only` when it names one. */
export async function trailsToMove(dataDir: string, only?: string): Promise<TrailFile[]> {
  const all = await new TrailDirectories(dataDir).list()
  if (only === undefined) return all
  const one = all.find((trail) => trail.name === only)
  if (one === undefined)
    throw new AuditError(
      'trail_not_found',
      `no trail named ${only} in the data directory: audit-trail trails list --data-dir DIR shows its trails`,
    )
  return [one]
}

const refusal = (name: string, what: string) =>
  new AuditError(
    'conflict',
    `the database already holds a trail ${name} with ${what}: migrate moves a trail only where the database ` +
      `has none of that name, or an empty one of the same origin; nothing was moved`,
  )

/** Refuses a database trail of the same name as `trail` unless it has its origin and holds nothing. */
async function assertTakeable(dataDir: string, databaseUrl: string, row: TrailRow, trail: TrailFile): Promise<void> {
  if (row.origin !== trail.origin) throw refusal(trail.name, `origin ${row.origin}, not ${trail.origin}`)
  const target = await openPostgresStore({
    databaseUrl: row.database_url ?? databaseUrl,
    trail: {name: row.name, schema: row.schema},
  })
  try {
    const held = await heldBy(target)
    if (await target.sealed()) held.push('a seal')
    const key = await target.storedLogKey()
    const own = await readLogKey(new TrailDirectories(dataDir).directoryOf(trail.name))
    if (key !== undefined && own !== undefined && key.trim() !== own.trim()) held.push('another log key')
    if (held.length > 0) throw refusal(trail.name, listed(held))
  } finally {
    await target.close()
  }
}

/**
 * Before anything is written: a database trail of a moved trail's name must be empty and of its
 * origin, and no other database trail may hold its origin (to a witness an origin is one log).
 */
export async function assertTrailsFree(dataDir: string, databaseUrl: string, trails: TrailFile[]): Promise<void> {
  if (trails.length === 0) return
  const catalog = await openPostgresTrailCatalog(databaseUrl)
  try {
    const rows = await catalog.list()
    for (const trail of trails) {
      const other = rows.find((row) => row.origin === trail.origin && row.name !== trail.name)
      if (other !== undefined) throw refusal(other.name, `origin ${trail.origin}, trail ${trail.name}'s`)
      const row = rows.find((candidate) => candidate.name === trail.name)
      if (row !== undefined) await assertTakeable(dataDir, databaseUrl, row, trail)
    }
  } finally {
    await catalog.close()
  }
}

/** The database's row of `trail`, registered under its origin when it has none. */
async function registered(databaseUrl: string, trail: TrailFile): Promise<TrailRow> {
  const catalog = await openPostgresTrailCatalog(databaseUrl)
  try {
    const row = await catalog.get(trail.name)
    if (row !== undefined) return row
    await catalog.create({
      name: trail.name,
      origin: trail.origin ?? '',
      ...(trail.created_at === undefined ? {} : {createdAt: trail.created_at}),
    })
    return (await catalog.get(trail.name))!
  } finally {
    await catalog.close()
  }
}

/** Trail `trail` of `dataDir` into the database; `service`: the service's TSA, which every trail shares. */
export async function copyTrail(
  options: {dataDir: string; databaseUrl: string; onProgress?: Progress},
  trail: TrailFile,
  service: LogIdentityMaterial,
): Promise<CopiedTrail> {
  const dir = path.resolve(new TrailDirectories(options.dataDir).directoryOf(trail.name))
  const source = await openSqlJsStore({dataDir: dir, create: false})
  try {
    const logKeyPem = await readLogKey(dir)
    const own: LogIdentityMaterial = {tsaAnchors: [], ...(logKeyPem === undefined ? {} : {logKeyPem})}
    const row = await registered(options.databaseUrl, trail)
    const target = await openPostgresStore({
      databaseUrl: row.database_url ?? options.databaseUrl,
      trail: {name: row.name, schema: row.schema},
    })
    try {
      await assertEmpty(target)
      const conflict = await target.adoptIdentity!(own)
      if (conflict.length > 0) throw new AuditError('validation_error', conflictMessage(conflict))
      const total = await copyLog(source, target, options.onProgress)
      // Sealed last (docs/trails.md, Sealing): a trail sealed in the database is one copied whole.
      const sealed = await source.sealed()
      if (sealed) await target.seal(trail.sealed_at)
      return {
        name: trail.name,
        ...(trail.origin === undefined ? {} : {origin: trail.origin}),
        total,
        sourceRoot: await rootOf(source),
        identity: {...(service.tsa === undefined ? {} : {tsa: service.tsa}), ...own, tsaAnchors: service.tsaAnchors},
        checkpoints: await source.listCheckpoints(),
        sealed,
      }
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}
