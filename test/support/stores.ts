/**
 * The stores a store-facing test runs against: the sql.js data directory and PostgreSQL. A
 * PostgreSQL variant gets a database of its own (atrail_test_<random>), dropped after it: a copy of
 * one migrated template database (docs/testing.md), or an empty one where the test migrates. When no
 * PostgreSQL server answers at TEST_DATABASE_URL, those variants are skipped and the root hook
 * (root-hooks.ts) says so in one line at the end of the run.
 */
import {createHash, randomBytes} from 'node:crypto'
import {mkdtemp, rm} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import {migrate, MIGRATIONS, SCHEMA_VERSION, TRAIL_STATE} from '../../src/store/postgres/migrations.js'

export type StoreKind = 'sqljs' | 'postgres'

/** The server the PostgreSQL variants use (its `postgres` database for creating and dropping). */
export const TEST_DATABASE_URL =
  process.env.AUDIT_TRAIL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export const postgresSkips = {count: 0}

let available: Promise<boolean> | undefined

/** Whether the PostgreSQL server answers (asked once per run). */
export function postgresAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new pg.Client({connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3000})
    try {
      await client.connect()
      await client.query('SELECT 1')
      return true
    } catch {
      return false
    } finally {
      await client.end().catch(() => undefined)
    }
  })()
  return available
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({connectionString: TEST_DATABASE_URL})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * The migrated template's name: the schema version and a digest of the migrations' SQL, so a changed
 * migration gets a template of its own and test runs of other trees keep theirs.
 */
function templateName(): string {
  const digest = createHash('sha256')
    .update([...MIGRATIONS, TRAIL_STATE].join('\0'))
    .digest('hex')
    .slice(0, 12)
  return `atrail_template_v${SCHEMA_VERSION}_${digest}`
}

/** Serialises the template's creation between test processes (pg_advisory_lock key). */
const TEMPLATE_LOCK = 0x61746d70

let template: Promise<string> | undefined

/**
 * The migrated template, made once for all test processes: migrated under another name and renamed
 * when done, under an advisory lock, so no process clones a half-made one. CREATE DATABASE ...
 * TEMPLATE needs it to have no connection, so none stays open to it.
 */
function migratedTemplate(): Promise<string> {
  template ??= admin(async (client) => {
    const name = templateName()
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK])
    try {
      const {rowCount} = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (rowCount) return name
      const building = `${name}_${randomBytes(4).toString('hex')}`
      await client.query(`CREATE DATABASE ${building}`)
      const pool = new pg.Pool({connectionString: databaseUrl(building), max: 1})
      try {
        await migrate(pool)
      } finally {
        await pool.end()
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
      return name
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK])
    }
  })
  return template
}

/**
 * A new database of its own, with the current schema (a copy of the migrated template) or, with
 * `empty`, nothing in it for a test of the migrations; `drop` ends its connections and removes it.
 */
export async function createTestDatabase(
  options: {empty?: boolean} = {},
): Promise<{url: string; drop(): Promise<void>}> {
  const name = `atrail_test_${randomBytes(6).toString('hex')}`
  const from = options.empty ? '' : ` TEMPLATE ${await migratedTemplate()}`
  await admin((client) => client.query(`CREATE DATABASE ${name}${from}`))
  return {
    url: databaseUrl(name),
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  }
}

/**
 * Runs `suite` once per store, inside a describe named after it. The PostgreSQL run is skipped
 * (and counted for the end-of-run line) when no server answers.
 */
export function forEachStore(suite: (store: StoreKind) => void): void {
  for (const store of ['sqljs', 'postgres'] as const) {
    describe(`[${store}]`, function () {
      if (store === 'postgres') {
        before(async function () {
          if (!(await postgresAvailable())) {
            postgresSkips.count++
            this.skip()
          }
        })
      }
      suite(store)
    })
  }
}

/**
 * For a describe whose every test needs PostgreSQL: skipped (and counted for the end-of-run line)
 * when no server answers; each test gets a database and a data directory of its own, removed after
 * `cleanUp` (what the test left running on them) has run.
 */
export function postgresPerTest(cleanUp: () => Promise<void> = async () => {}): {
  readonly url: string
  readonly dir: string
} {
  let database: {url: string; drop(): Promise<void>} | undefined
  const current = {url: '', dir: ''}
  before(async function () {
    if (!(await postgresAvailable())) {
      postgresSkips.count++
      this.skip()
    }
  })
  beforeEach(async () => {
    database = await createTestDatabase()
    current.url = database.url
    current.dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-test-'))
  })
  afterEach(async () => {
    await cleanUp()
    await database?.drop()
    database = undefined
    await rm(current.dir, {recursive: true, force: true})
  })
  return current
}

/**
 * Inside forEachStore: the flags that put a CLI command (or `serve`) on the store under test. For
 * PostgreSQL that is a database of its own, created before each test (or once for the describe,
 * with `per: 'suite'`) and dropped after it.
 */
export function storeFlags(store: StoreKind, per: 'test' | 'suite' = 'test'): (dataDir: string) => string[] {
  let database: {url: string; drop(): Promise<void>} | undefined
  if (store === 'postgres') {
    const [setUp, tearDown] = per === 'test' ? [beforeEach, afterEach] : [before, after]
    setUp(async () => {
      database = await createTestDatabase()
    })
    tearDown(async () => {
      await database?.drop()
      database = undefined
    })
  }
  return (dataDir) =>
    database === undefined ? ['--data-dir', dataDir] : ['--data-dir', dataDir, '--database-url', database.url]
}
