/**
 * kill -9 during an erasure of 100,000 events at random moments, 10 rounds a store (docs/erasure.md,
 * crash safety); ERASURE_CRASH_ROUNDS and ERASURE_CRASH_EVENTS change the run.
 */
import {killDuringErasures} from '../store/erasure-crash.js'
import {postgresAvailable} from '../support/stores.js'

const ROUNDS = Number(process.env.ERASURE_CRASH_ROUNDS ?? 10)
const COVERED = Number(process.env.ERASURE_CRASH_EVENTS ?? 100_000)

describe('an erasure of 100,000 events killed at random moments is completed on the next opening', function () {
  this.timeout(ROUNDS * 600_000)

  it(`[sqljs] ${ROUNDS} rounds`, async () => {
    await killDuringErasures({store: 'sqljs', rounds: ROUNDS, covered: COVERED, others: COVERED / 10})
  })

  it(`[postgres] ${ROUNDS} rounds`, async function () {
    if (!(await postgresAvailable())) return this.skip()
    await killDuringErasures({store: 'postgres', rounds: ROUNDS, covered: COVERED, others: COVERED / 10})
  })
})
