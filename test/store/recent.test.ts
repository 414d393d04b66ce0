import {expect} from 'chai'
import fc from 'fast-check'
import {openSqlJsStore} from '../../src/store/index.js'
import {RecordedOrder, type RecentSource} from '../../src/store/sqljs/recent.js'
import {EventMaker, removeDir, tempDir} from './support.js'

/** Rows as [index, recorded_at], index ascending, possibly with gaps. */
function arraySource(rows: [number, string][]): RecentSource {
  return {
    firstFrom: (index) => rows.find(([i]) => i >= index),
    countFrom: (index) => rows.filter(([i]) => i >= index).length,
    countScanning: (since) => rows.filter(([, r]) => r >= since).length,
  }
}

const stamp = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString()

describe('store recent count (events_last_24h)', () => {
  it('finds the recent suffix by binary search when recorded_at ascends, gaps or not (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({min: 1, max: 3}), fc.integer({min: 0, max: 2})), {maxLength: 60}),
        fc.integer({min: -1, max: 130}),
        (steps, sinceMinute) => {
          // Each step: a gap in index (1..3) and a non-negative step in time (0..2 minutes).
          const rows: [number, string][] = []
          let index = -1
          let minute = 0
          for (const [gap, later] of steps) rows.push([(index += gap), stamp((minute += later))])
          const since = stamp(sinceMinute)
          const expected = rows.filter(([, r]) => r >= since).length
          const order = new RecordedOrder('', true)
          let scans = 0
          const source = {...arraySource(rows), countScanning: () => (scans++, -1)}
          expect(order.countSince(since, index + 1, source)).to.equal(expected)
          expect(scans).to.equal(0)
        },
      ),
      {numRuns: 300},
    )
  })

  it('notices the first event stamped earlier than the one before, and then scans', () => {
    const order = new RecordedOrder(stamp(5), true)
    const at = (minutes: number[]) => new EventMaker().many(minutes.length, (i) => ({recorded_at: stamp(minutes[i]!)}))
    expect(order.observe(at([5, 6, 6]))).to.equal(false)
    expect(order.observe(at([7, 3]))).to.equal(true)
    expect(order.isAscending).to.equal(false)
    expect(order.observe(at([1]))).to.equal(false)
    expect(
      order.countSince(
        stamp(0),
        10,
        arraySource([
          [0, stamp(9)],
          [1, stamp(1)],
        ]),
      ),
    ).to.equal(2)
  })

  it('gives the same count as a scan in the store, before and after the clock steps back and a reopen', async () => {
    const dir = tempDir()
    try {
      const maker = new EventMaker()
      const ascending = maker.many(50, (i) => ({recorded_at: stamp(Math.floor(i / 3))}))
      let store = await openSqlJsStore({dataDir: dir})
      await store.appendEvents(ascending)
      for (const minute of [0, 7, 8, 16, 17, 40]) {
        expect((await store.stats(stamp(minute))).events_last_24h).to.equal(
          ascending.filter((e) => e.recorded_at >= stamp(minute)).length,
        )
      }
      const stepBack = maker.many(5, (i) => ({recorded_at: stamp(2 + i)}))
      await store.appendEvents(stepBack)
      const all = [...ascending, ...stepBack]
      await store.close()
      store = await openSqlJsStore({dataDir: dir})
      for (const minute of [0, 3, 7, 16]) {
        expect((await store.stats(stamp(minute))).events_last_24h).to.equal(
          all.filter((e) => e.recorded_at >= stamp(minute)).length,
        )
      }
      await store.close()
    } finally {
      removeDir(dir)
    }
  })
})
