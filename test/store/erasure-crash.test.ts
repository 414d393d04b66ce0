/** kill -9 during an erasure, a short run for the main suite (the long one: test/reliability/). */
import {postgresAvailable, postgresSkips} from '../support/stores.js'
import {killDuringErasures} from './erasure-crash.js'

describe('an erasure killed at random moments is completed on the next opening', function () {
  this.timeout(300_000)

  it('[sqljs] 3 rounds over 5,000 events', async () => {
    await killDuringErasures({store: 'sqljs', rounds: 3, covered: 4500, others: 500})
  })

  it('[postgres] 3 rounds over 5,000 events', async function () {
    if (!(await postgresAvailable())) {
      postgresSkips.count++
      return this.skip()
    }
    await killDuringErasures({store: 'postgres', rounds: 3, covered: 4500, others: 500})
  })
})
