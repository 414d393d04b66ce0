/**
 * The PostgreSQL tests use copies of one migrated template database (test/support/stores.ts,
 * docs/testing.md); this one migrates an empty database from nothing, as a user's first start does,
 * and checks it ends with the same schema as a copy of the template.
 */
import {expect} from 'chai'
import {openPostgresStore} from '../../src/store/index.js'
import {SCHEMA_VERSION} from '../../src/store/postgres/migrations.js'
import {connected, createTestDatabase, postgresAvailable, postgresSkips} from '../support/stores.js'

/** Tables, columns, indexes and constraints of the public schema, in a stable order. */
function schemaOf(url: string): Promise<{version: unknown; objects: string[]}> {
  return connected(async (client) => {
    const columns = await client.query(`SELECT table_name || '.' || column_name || ' ' || data_type AS o
      FROM information_schema.columns WHERE table_schema = 'public'`)
    const indexes = await client.query(`SELECT indexdef AS o FROM pg_indexes WHERE schemaname = 'public'`)
    const constraints = await client.query(`SELECT conrelid::regclass || ' ' || pg_get_constraintdef(oid) AS o
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace`)
    const version = (await client.query('SELECT version FROM schema_version')).rows
    const objects = [...columns.rows, ...indexes.rows, ...constraints.rows].map((row: {o: string}) => row.o).sort()
    return {version, objects}
  }, url)
}

describe('PostgreSQL test databases: the template against a migration from nothing', () => {
  before(async function () {
    if (!(await postgresAvailable())) {
      postgresSkips.count++
      this.skip()
    }
  })

  it('an empty database migrated on first open has the schema of a copy of the template', async () => {
    const [empty, copy] = [await createTestDatabase({empty: true}), await createTestDatabase()]
    try {
      const before = await schemaOf(empty.url).catch((error: Error) => error.message)
      expect(before).to.match(/relation "schema_version" does not exist/)
      const store = await openPostgresStore({databaseUrl: empty.url})
      await store.close()
      const migrated = await schemaOf(empty.url)
      expect(migrated.version).to.deep.equal([{version: SCHEMA_VERSION}])
      expect(migrated.objects).to.include.members(['events.hash text', 'schema_version.version integer'])
      expect(migrated).to.deep.equal(await schemaOf(copy.url))
    } finally {
      await empty.drop()
      await copy.drop()
    }
  })
})
