/** Mocha root hooks (loaded by .mocharc.json): the one line that says the PostgreSQL tests did not run. */
import {postgresSkips, TEST_DATABASE_URL} from './stores.js'

export const mochaHooks = {
  afterAll(): void {
    if (postgresSkips.count === 0) return
    const where = new URL(TEST_DATABASE_URL)
    where.password = ''
    console.log(
      `\n  The PostgreSQL tests did not run (${postgresSkips.count} suites): no server answered at ` +
        `${where.toString()}; start PostgreSQL there or set AUDIT_TRAIL_TEST_DATABASE_URL (docs/postgres.md).`,
    )
  },
}
