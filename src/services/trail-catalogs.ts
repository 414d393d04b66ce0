/**
 * Where a service's trails are listed and made (docs/trails.md, Storage): the data directory's
 * `trails/` folder, or the service database's `trails` table. Each tells what opens a trail's store.
 */
import path from 'node:path'
import {AuditError} from '../core/errors.js'
import {openPostgresTrailCatalog, TrailDirectories, type TrailRow} from '../store/index.js'
import type {AuditOptions} from './audit.js'

/** A trail but `default`, as its catalog records it. */
export interface TrailRecord {
  name: string
  origin: string
  created_at: string
}

export interface TrailCatalog {
  /** Every trail but `default`, by name. */
  list(): Promise<TrailRecord[]>
  get(name: string): Promise<TrailRecord | undefined>
  /** Makes the trail whole or not at all; `conflict` when it exists. */
  create(trail: {name: string; origin: string; inDatabase?: string}): Promise<void>
  /** What opens the trail's store, over the service's options. */
  storeOptions(name: string): Promise<Partial<Pick<AuditOptions, 'dataDir' | 'databaseUrl' | 'trail' | 'store'>>>
  close(): Promise<void>
}

/** The trails of a data directory: `trails/NAME/`, each a store directory. */
export async function directoryCatalog(options: AuditOptions): Promise<TrailCatalog> {
  const directories = new TrailDirectories(options.dataDir)
  // The caller holds the data directory's lock (trail default is open): no other process creates.
  await directories.removeStaging()
  const records = (files: Awaited<ReturnType<TrailDirectories['list']>>) =>
    files.map((file) => ({name: file.name, origin: file.origin ?? '', created_at: file.created_at ?? ''}))
  return {
    list: async () => records(await directories.list()),
    get: async (name) => records([await directories.get(name)].filter((file) => file !== undefined))[0],
    async create({name, origin, inDatabase}) {
      if (inDatabase !== undefined)
        throw new AuditError(
          'validation_error',
          '--in-database puts a trail in a PostgreSQL database of its own: the service must be on one too ' +
            '(--database-url)',
        )
      await directories.create({name, origin, created_at: new Date().toISOString()})
    },
    storeOptions: async (name) => ({
      dataDir: path.resolve(directories.directoryOf(name)),
      databaseUrl: undefined,
      trail: {name},
      // The directory exists with its trail.json: nothing to make.
      store: {...options.store, create: false},
    }),
    close: async () => {},
  }
}

/** The trails of a service on PostgreSQL: the `trails` table of its database. */
export async function databaseCatalog(databaseUrl: string): Promise<TrailCatalog> {
  const catalog = await openPostgresTrailCatalog(databaseUrl)
  const record = (row: TrailRow): TrailRecord => ({name: row.name, origin: row.origin, created_at: row.created_at})
  return {
    list: async () => (await catalog.list()).map(record),
    get: async (name) => {
      const row = await catalog.get(name)
      return row && record(row)
    },
    create: (trail) => catalog.create(trail),
    async storeOptions(name) {
      const row = await catalog.get(name)
      if (row === undefined) throw new AuditError('trail_not_found', `no trail named ${name}`)
      return {databaseUrl: row.database_url ?? databaseUrl, trail: {name, schema: row.schema}}
    },
    close: () => catalog.close(),
  }
}
