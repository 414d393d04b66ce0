import {expect} from 'chai'
import {AuditError} from '../../src/core/errors.js'
import type {SequenceRequest, SequenceResult} from '../../src/core/event/index.js'
import {MerkleTree} from '../../src/core/merkle/index.js'
import {IngestService} from '../../src/services/ingest.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import type {EventStore} from '../../src/store/store.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

/** The store with recordEvents replaced; every other member is the store's own. */
function withRecord(store: SqlJsStore, record: (requests: SequenceRequest[]) => Promise<SequenceResult>): EventStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'recordEvents') return record
      const value = Reflect.get(target, key, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

describe('IngestService group commit', () => {
  let dir: string
  let store: SqlJsStore
  let unhandled: unknown[]
  const onUnhandled = (reason: unknown) => unhandled.push(reason)

  beforeEach(async () => {
    dir = await tempDir()
    store = await openSqlJsStore({dataDir: dir})
    unhandled = []
    process.on('unhandledRejection', onUnhandled)
  })
  afterEach(async () => {
    process.off('unhandledRejection', onUnhandled)
    await store.close()
    await removeDir(dir)
  })

  it('answers every request and keeps flushing when a listener throws after the write', async () => {
    const ingest = new IngestService({
      store,
      tree: new MerkleTree(),
      onRecorded: () => {
        throw new Error('listener failed')
      },
    })
    // The second and third arrive while the first is written: they are the next group.
    const first = ingest.recordOne(makeEvent({agent_id: 'a'}))
    const rest = [ingest.recordOne(makeEvent({agent_id: 'b'})), ingest.recordOne(makeEvent({agent_id: 'c'}))]
    const answered = await Promise.all([first, ...rest])
    expect(answered.map((a) => a.status)).to.deep.equal([201, 201, 201])
    expect((await ingest.recordOne(makeEvent())).event.index).to.equal(3)
    await new Promise((resolve) => setImmediate(resolve))
    expect(unhandled).to.deep.equal([])
  })

  it('reports a failure after the write to onError, not as a rejection', async () => {
    const errors: unknown[] = []
    const ingest = new IngestService({
      store,
      tree: new MerkleTree(),
      onRecorded: () => {
        throw new Error('listener failed')
      },
      onError: (error) => errors.push(error),
    })
    await ingest.recordOne(makeEvent())
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['listener failed'])
  })

  it('bounds a group by events', async () => {
    const sizes: number[] = []
    const counting = withRecord(store, (requests) => {
      sizes.push(requests.reduce((n, r) => n + r.items.length, 0))
      return store.recordEvents(requests)
    })
    const ingest = new IngestService({store: counting, tree: new MerkleTree(), maxGroupEvents: 3})
    const batches = Array.from({length: 6}, (_, i) =>
      ingest.recordBatch([makeEvent({agent_id: `a${i}`}), makeEvent({agent_id: `a${i}`})]),
    )
    const results = await Promise.all(batches)
    expect(results.every((r) => r.status === 201)).to.equal(true)
    // The first request is written alone; the others queue behind it, two requests (4 events)
    // would pass the bound of 3, so each later group holds one request.
    expect(sizes).to.deep.equal([2, 2, 2, 2, 2, 2])
    expect(await store.count()).to.equal(12)
  })

  it('bounds a group by bytes, but never splits a request', async () => {
    const sizes: number[] = []
    const counting = withRecord(store, (requests) => {
      sizes.push(requests.length)
      return store.recordEvents(requests)
    })
    const ingest = new IngestService({store: counting, tree: new MerkleTree(), maxGroupBytes: 50_000})
    const big = {text: 'x'.repeat(30_000)}
    const small = Array.from({length: 4}, () => ingest.recordOne(makeEvent({input: {n: 1}})))
    const large = [ingest.recordOne(makeEvent({input: big})), ingest.recordOne(makeEvent({input: big}))]
    const huge = ingest.recordBatch([makeEvent({input: big}), makeEvent({input: big})])
    await Promise.all([...small, ...large, huge])
    // [first alone] [3 small + 1 large] [1 large] [the batch over the bound, alone]
    expect(sizes).to.deep.equal([1, 4, 1, 1])
    expect(await store.count()).to.equal(8)
  })

  it('fails only the requests of the group that failed', async () => {
    let calls = 0
    const failingSecond = withRecord(store, (requests) => {
      calls++
      if (calls === 2) return Promise.reject(new AuditError('storage_unavailable', 'injected'))
      return store.recordEvents(requests)
    })
    const ingest = new IngestService({store: failingSecond, tree: new MerkleTree(), maxGroupEvents: 2})
    const answers = await Promise.allSettled(
      Array.from({length: 5}, (_, i) => ingest.recordOne(makeEvent({agent_id: `g${i}`}))),
    )
    // Groups: [0] [1, 2] (fails) [3, 4]
    expect(answers.map((a) => a.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled'])
    const indexes = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value.event.index] : []))
    expect(indexes).to.deep.equal([0, 1, 2])
  })

  it("keeps the tree the log's when another writer recorded events in between", async () => {
    const tree = new MerkleTree()
    const ingest = new IngestService({store, tree})
    await ingest.recordOne(makeEvent())
    // Another writer of the same store (a second process on a database server) appends two.
    const other = new IngestService({store, tree: new MerkleTree()})
    await other.recordBatch([makeEvent({agent_id: 'x'}), makeEvent({agent_id: 'y'})])
    await ingest.recordOne(makeEvent())
    const reference = new MerkleTree()
    for (const hash of await store.eventHashes()) reference.appendHex(hash)
    expect(tree.size).to.equal(4)
    expect(Buffer.from(tree.root()).toString('hex')).to.equal(Buffer.from(reference.root()).toString('hex'))
  })
})
