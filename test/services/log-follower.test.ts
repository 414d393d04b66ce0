import {expect} from 'chai'
import type {StoredEvent} from '../../src/core/types.js'
import {Feed} from '../../src/services/feed.js'
import {LogFollower} from '../../src/services/log-follower.js'
import type {EventStore} from '../../src/store/store.js'

const eventAt = (index: number) => ({index, hash: '00'.repeat(32)}) as unknown as StoredEvent

/** A store whose count answers only when the test says so, and that holds no event to scan. */
function slowStore(): {store: EventStore; answer(size: number): void} {
  let answer: (size: number) => void = () => {}
  const store = {
    count: () => new Promise<number>((resolve) => (answer = resolve)),
    scanEvents: async function* () {},
  } as unknown as EventStore
  return {store, answer: (size) => answer(size)}
}

describe('LogFollower', () => {
  it('publishes what this process recorded at once when nothing else is in turn', async () => {
    const {store} = slowStore()
    const feed = new Feed()
    const seen: number[] = []
    feed.on('events', (events) => seen.push(...events.map((event) => event.index)))
    const follower = new LogFollower({store, published: 0, feed, onError: (error) => expect.fail(String(error))})
    follower.recorded([eventAt(0), eventAt(1)])
    expect(follower.published).to.equal(2)
    expect(seen).to.deep.equal([0, 1])
  })

  it('settles only once events recorded behind a running turn are published', async () => {
    const {store, answer} = slowStore()
    const feed = new Feed()
    const seen: number[] = []
    feed.on('events', (events) => seen.push(...events.map((event) => event.index)))
    const follower = new LogFollower({store, published: 0, feed, onError: (error) => expect.fail(String(error))})
    // Another process's NOTIFY without a size: the turn waits for the count.
    follower.grown()
    follower.recorded([eventAt(0), eventAt(1)])
    expect(follower.published, 'behind the running turn').to.equal(0)
    let settled = false
    const done = follower.settled().then(() => (settled = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(settled, 'before the count answered').to.equal(false)
    answer(0)
    await done
    expect(follower.published).to.equal(2)
    expect(seen).to.deep.equal([0, 1])
  })
})
