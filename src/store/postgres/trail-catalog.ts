/**
 * The trails of a service on PostgreSQL (docs/trails.md, Storage): the table `trails` of the
 * service's database names each trail but `default`, the schema of its tables and, when they are
 * in another database (`trails create --in-database URL`), that database's URL, so that every
 * `serve` process finds every trail. The table is the service's own, made by its own statement,
 * not by the numbered migrations that every trail's schema runs.
 *
 * A trail in the service's database is made in one transaction: its row, its schema, the
 * migrations in it. One in another database takes two: the schema there first, then the row here;
 * a crash between them leaves an empty schema there that names the trail, which the next
 * `trails create` of that name and database takes over.
 */
import type pg from 'pg'
import {AuditError} from '../../core/errors.js'
import {Database, describe, inTransaction, openPool} from './database.js'
import {databaseError} from './errors.js'
import {migrateOn} from './migrations.js'
import {lockStatement, quoteIdentifier, schemaFor, trailScope} from './trail-scope.js'

const REGISTRY = `CREATE TABLE IF NOT EXISTS trails (
  name text PRIMARY KEY,
  schema text NOT NULL,
  database_url text,
  origin text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`

/** Serialises changes of the registry between processes (pg_advisory_xact_lock key 'atrt'). */
const REGISTRY_LOCK = [0x61747274]

export interface TrailRow {
  name: string
  /** The schema of its tables. */
  schema: string
  /** The database of its tables when not the service's. */
  database_url: string | null
  origin: string
  created_at: string
}

const COLUMNS = `name, schema, database_url, origin, to_char(created_at AT TIME ZONE 'UTC',
  'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`

/** `work` in a transaction of its own on a new pool of `databaseUrl`, closed afterwards. */
async function onDatabase<T>(databaseUrl: string, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  const pool = openPool(databaseUrl, 1)
  try {
    const client = await pool.connect()
    try {
      return await inTransaction(client, () => work(client))
    } finally {
      client.release()
    }
  } catch (error) {
    if (error instanceof AuditError) throw error
    throw databaseError(`cannot use the database ${describe(databaseUrl)}: ${(error as Error).message}`, {
      cause: error,
    })
  } finally {
    await pool.end().catch(() => undefined)
  }
}

export class PostgresTrailCatalog {
  private constructor(
    private readonly db: Database,
    private readonly databaseUrl: string,
  ) {}

  static async open(databaseUrl: string): Promise<PostgresTrailCatalog> {
    await onDatabase(databaseUrl, async (client) => {
      await client.query(lockStatement('pg_advisory_xact_lock', REGISTRY_LOCK), REGISTRY_LOCK)
      await client.query(REGISTRY)
    })
    return new PostgresTrailCatalog(new Database(openPool(databaseUrl, 2)), databaseUrl)
  }

  /** Every trail but `default`, by name. */
  list(): Promise<TrailRow[]> {
    return this.db.query<TrailRow>(`SELECT ${COLUMNS} FROM trails ORDER BY name`)
  }

  async get(name: string): Promise<TrailRow | undefined> {
    const [row] = await this.db.query<TrailRow>(`SELECT ${COLUMNS} FROM trails WHERE name = $1`, [name])
    return row
  }

  /** Makes trail `name` whole (see the header); `conflict` when it exists, or its schema does. */
  async create(trail: {name: string; origin: string; inDatabase?: string; createdAt?: string}): Promise<void> {
    const {name, origin, inDatabase, createdAt} = trail
    const schema = schemaFor(name)
    if (inDatabase === undefined) {
      await onDatabase(this.databaseUrl, async (client) => {
        await this.#register(client, {name, schema, origin, database_url: null}, createdAt)
        await makeSchema(client, name, schema)
      })
      return
    }
    if ((await this.get(name)) !== undefined) throw exists(name)
    const made = await onDatabase(inDatabase, (client) => makeOrTakeOver(client, name, schema))
    try {
      await onDatabase(this.databaseUrl, (client) =>
        this.#register(client, {name, schema, origin, database_url: inDatabase}),
      )
    } catch (error) {
      // Another process registered the name meanwhile: the schema made for nothing goes again.
      if (made) await onDatabase(inDatabase, (client) => client.query(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE`))
      throw error
    }
  }

  close(): Promise<void> {
    return this.db.close()
  }

  /** `createdAt`: the creation time `migrate` keeps from a data directory's trail.json; default now. */
  async #register(client: pg.ClientBase, row: Omit<TrailRow, 'created_at'>, createdAt?: string): Promise<void> {
    await client.query(lockStatement('pg_advisory_xact_lock', REGISTRY_LOCK), REGISTRY_LOCK)
    const {rowCount} = await client.query(
      `INSERT INTO trails (name, schema, database_url, origin, created_at)
       VALUES ($1, $2, $3, $4, COALESCE($5::timestamptz, clock_timestamp())) ON CONFLICT (name) DO NOTHING`,
      [row.name, row.schema, row.database_url, row.origin, createdAt ?? null],
    )
    if (rowCount === 0) throw exists(row.name)
  }
}

function exists(name: string): AuditError {
  return new AuditError('conflict', `trail ${name} exists`)
}

async function schemaExists(client: pg.ClientBase, schema: string): Promise<boolean> {
  return (await client.query('SELECT FROM pg_namespace WHERE nspname = $1', [schema])).rows.length > 0
}

/** The trail's schema with its tables, in the caller's transaction; `conflict` when the schema exists. */
async function makeSchema(client: pg.ClientBase, name: string, schema: string): Promise<void> {
  if (await schemaExists(client, schema))
    throw new AuditError('conflict', `the database already has a schema ${schema}, where trail ${name} would be`)
  await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`)
  // Until COMMIT only: the migrations name their tables as they do in every trail's schema.
  await client.query(`SET LOCAL search_path TO ${quoteIdentifier(schema)}`)
  await migrateOn(client, trailScope(name, schema))
  await client.query('INSERT INTO trail_state (name) VALUES ($1)', [name])
}

/**
 * In another database: makes the schema (true), or takes over the empty one a crash left between
 * the two transactions (false): it names this trail and holds no event. Anything else is `conflict`.
 */
async function makeOrTakeOver(client: pg.ClientBase, name: string, schema: string): Promise<boolean> {
  const key = trailScope(name, schema).lockKey(REGISTRY_LOCK[0]!)
  await client.query(lockStatement('pg_advisory_xact_lock', key), key)
  if (!(await schemaExists(client, schema))) {
    await makeSchema(client, name, schema)
    return true
  }
  const q = quoteIdentifier(schema)
  const {rows} = await client
    .query<{name: string; sealed: boolean; size: string}>(
      `SELECT s.name, s.sealed_at IS NOT NULL AS sealed, l.size FROM ${q}.trail_state s, ${q}.log_state l`,
    )
    .catch(() => ({rows: []}))
  const [row] = rows
  if (row === undefined || row.name !== name || row.sealed || Number(row.size) !== 0)
    throw new AuditError('conflict', `the database already has a schema ${schema}, where trail ${name} would be`)
  return false
}
