/**
 * The stores a store-facing test runs against: the sql.js data directory and PostgreSQL. A
 * PostgreSQL variant gets a database of its own (atrail_test_<random>), dropped after it. When no
 * PostgreSQL server answers at TEST_DATABASE_URL, those variants are skipped and the root hook
 * (root-hooks.ts) says so in one line at the end of the run.
 */
import {randomBytes} from 'node:crypto'
import {mkdtemp, rm} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

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

/** A new empty database; `drop` ends its connections and removes it. */
export async function createTestDatabase(): Promise<{url: string; drop(): Promise<void>}> {
  const name = `atrail_test_${randomBytes(6).toString('hex')}`
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
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
