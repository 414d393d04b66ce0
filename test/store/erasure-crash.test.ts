/** kill -9 during an erasure, a short run for the main suite (the long one: test/reliability/). */
import {postgresAvailable, postgresSkips} from '../support/stores.js'
import {killDuringErasures} from './erasure-crash.js'

describe('an erasure killed at random moments is completed on the next opening', function () {
  this.timeout(300_000)

  it('[sqljs] 2 rounds over 2,000 events', async () => {
    await killDuringErasures({store: 'sqljs', rounds: 2, covered: 1800, others: 200})
  })

  it('[postgres] 2 rounds over 2,000 events', async function () {
    if (!(await postgresAvailable())) {
      postgresSkips.count++
      return this.skip()
    }
    await killDuringErasures({store: 'postgres', rounds: 2, covered: 1800, others: 200})
  })
})
