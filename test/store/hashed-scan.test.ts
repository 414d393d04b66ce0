/**
 * scanHashedEvents: the stored events with their hashes recomputed from stored content, on a
 * hashing thread for large scans. Whatever thread hashed them, the answer must be exactly that of
 * scanEvents followed by recomputeHash, and the chain verdicts exactly those of the plain verifier.
 */
import {expect} from 'chai'
import * as fs from 'node:fs'
import * as path from 'node:path'
import {execFileSync} from 'node:child_process'
import {ChainVerifier, recomputeHash} from '../../src/core/chain/index.js'
import {computeEventHash} from '../../src/core/event/index.js'
import type {StoredEvent} from '../../src/core/types.js'
import {
  hashedBatches,
  hashRows,
  HASH_CHUNK,
  QUEUED_PER_THREAD,
  THREAD_FROM_EVENTS,
  type HashedBatch,
  type IndexedLink,
} from '../../src/store/hashed-scan.js'
import {EVENT_JSON} from '../../src/store/sqljs/schema.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import type {ScanOptions} from '../../src/store/store.js'
import {EventMaker, eventId, removeDir, tempDir} from './support.js'

/** Events whose stored hashes are their real hashes and whose links are real. */
function genuine(count: number): StoredEvent[] {
  const maker = new EventMaker()
  const heads = new Map<string, string>()
  return maker
    .many(count, (i) => ({agent_id: `agent-${i % 7}`, input: {n: i, text: `step ${i}`}, labels: {k: String(i % 3)}}))
    .map((event) => {
      const prev = heads.get(event.agent_id) ?? event.prev_hash
      const content = {...event, prev_hash: prev}
      const hash = computeEventHash(content)
      heads.set(event.agent_id, hash)
      return {...content, hash}
    })
}

const linkOf = ({index, id, agent_id, sequence, prev_hash, hash}: StoredEvent) => ({
  index,
  id,
  agent_id,
  sequence,
  prev_hash,
  hash,
})

/** The stored rows as the store reads them, in batches of 5,000. */
function storedRows(store: SqlJsStore, count: number): string[][] {
  const rows: string[][] = []
  for (let from = 0; from < count; from += 5000) {
    rows.push(
      (store as unknown as {db: {prepare(sql: string): {texts(p: number[]): string[]}}}).db
        .prepare(`SELECT ${EVENT_JSON} FROM events WHERE "index" >= ? AND "index" < ? ORDER BY "index"`)
        .texts([from, from + 5000]),
    )
  }
  return rows
}

async function plain(store: SqlJsStore, options?: ScanOptions): Promise<{links: IndexedLink[]; hashes: string[]}> {
  const events: StoredEvent[] = []
  for await (const event of store.scanEvents(options)) events.push(event)
  return {links: events.map(linkOf), hashes: events.map(recomputeHash)}
}

async function hashed(store: SqlJsStore, options?: ScanOptions): Promise<{links: IndexedLink[]; hashes: string[]}> {
  const links: IndexedLink[] = []
  const hashes: string[] = []
  for await (const batch of store.scanHashedEvents(options)) {
    expect(batch.hashes).to.have.length(batch.links.length)
    links.push(...batch.links)
    hashes.push(...batch.hashes)
  }
  return {links, hashes}
}

describe('store scanHashedEvents (hashes recomputed, on a thread for large scans)', function () {
  this.timeout(120_000)
  const count = THREAD_FROM_EVENTS + 7_000
  let dir: string
  let store: SqlJsStore

  before(async () => {
    dir = tempDir()
    let writer = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    const events = genuine(count)
    for (let i = 0; i < events.length; i += 5000) await writer.appendEvents(events.slice(i, i + 5000))
    await writer.close()
    // Tamper while stopped: an edited field (hash_mismatch), content no JSON parser takes as
    // hashable (1e999 is Infinity: "unhashable content"), a rewritten link.
    for (const file of fs.readdirSync(dir)) if (file.startsWith('journal-')) fs.rmSync(path.join(dir, file))
    execFileSync('sqlite3', [
      path.join(dir, 'events.sqlite'),
      `UPDATE events SET action_name = 'edited' WHERE "index" = 12345;
      UPDATE events SET input = '{"n":1e999}' WHERE "index" = 40001;
      UPDATE events SET prev_hash = '${'1'.repeat(64)}' WHERE "index" = 55557;`,
    ])
    writer = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    store = writer
  })

  after(async () => {
    await store.close()
    removeDir(dir)
  })

  it('gives exactly what scanEvents and recomputeHash give, on the hashing thread', async () => {
    const threaded = await hashed(store)
    const reference = await plain(store)
    expect(threaded.links.length).to.equal(count)
    expect(threaded.hashes).to.deep.equal(reference.hashes)
    expect(threaded.links).to.deep.equal(reference.links)
    expect(threaded.hashes[12345])
      .to.match(/^[0-9a-f]{64}$/)
      .and.not.equal(threaded.links[12345]!.hash)
    expect(threaded.hashes[40001]).to.match(/^unhashable content: /)
  })

  it('gives the same for a small scan, hashed on this thread (a range and an agent)', async () => {
    const range = {fromIndex: 40_000, toIndex: 40_010}
    expect(await hashed(store, range)).to.deep.equal(await plain(store, range))
    const agent = {filter: {agent_id: 'agent-3'}}
    expect(await hashed(store, agent)).to.deep.equal(await plain(store, agent))
  })

  it('hashes on this thread whatever a failed hashing thread did not', async () => {
    const rows = storedRows(store, count)
    async function* source() {
      yield* rows
    }
    let asked = 0
    let stopped = false
    // A thread that answers once, then is lost (as a crashed worker rejects everything after).
    const failing = () => ({
      hash: (batch: string[]): Promise<HashedBatch> =>
        asked++ === 0 ? Promise.resolve(hashRows(batch)) : Promise.reject(new Error('lost')),
      stop: async () => {
        stopped = true
      },
    })
    const out: HashedBatch[] = []
    for await (const batch of hashedBatches(source(), count, failing)) out.push(batch)
    expect(asked).to.be.above(1)
    expect(stopped).to.equal(true)
    expect(out.flatMap((b) => b.hashes)).to.deep.equal((await plain(store)).hashes)
  })

  it('keeps the order with two threads answering out of turn, and hashes nothing here when told not to', async () => {
    const rows = storedRows(store, count)
    async function* source() {
      yield* rows
    }
    let started = 0
    let handed = 0
    let busy = 0
    let mostBusy = 0
    // Threads that answer after a random delay, so a later batch is often done before an earlier one.
    const slow = () => {
      started++
      return {
        hash: async (batch: string[]): Promise<HashedBatch> => {
          handed++
          busy++
          mostBusy = Math.max(mostBusy, busy)
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20))
          busy--
          return hashRows(batch)
        },
        stop: async () => {},
      }
    }
    const out: HashedBatch[] = []
    for await (const batch of hashedBatches(source(), count, slow, {threads: 2, callerHashes: false})) out.push(batch)
    expect(started).to.equal(2)
    // Every row went to a thread, a chunk at a time.
    expect(handed).to.equal(rows.reduce((chunks, batch) => chunks + Math.ceil(batch.length / HASH_CHUNK), 0))
    // Each thread holds the chunk it hashes and those queued behind it, never more.
    expect(mostBusy).to.equal(2 * QUEUED_PER_THREAD)
    expect(out.flatMap((b) => b.hashes)).to.deep.equal((await plain(store)).hashes)
    expect(out.flatMap((b) => b.links.map((link) => link.index))).to.deep.equal(
      (await plain(store)).links.map((l) => l.index),
    )
  })

  it('hashes here, once reading ends, the chunks still queued behind another on a thread', async () => {
    const rows = storedRows(store, count)
    async function* source() {
      yield* rows
    }
    const fromThread = new Set<HashedBatch>()
    let handed = 0
    // One thread that hashes a chunk at a time, 20 ms each: when reading ends it still holds several.
    const serial = () => {
      let free = Promise.resolve()
      return {
        hash: (batch: readonly string[]): Promise<HashedBatch> => {
          handed++
          const done = free.then(async () => {
            await new Promise((resolve) => setTimeout(resolve, 20))
            const result = hashRows(batch)
            fromThread.add(result)
            return result
          })
          free = done.then(() => undefined)
          return done
        },
        stop: async () => {},
      }
    }
    const out: HashedBatch[] = []
    for await (const batch of hashedBatches(source(), count, serial, {threads: 1, callerHashes: true})) out.push(batch)
    expect(out.flatMap((b) => b.hashes)).to.deep.equal((await plain(store)).hashes)
    const answeredByThread = out.filter((batch) => fromThread.has(batch)).length
    expect(handed).to.be.at.least(QUEUED_PER_THREAD)
    // Of the chunks the thread was handed, those it had not reached were hashed here and taken from here.
    expect(answeredByThread).to.be.below(handed)
    expect(answeredByThread).to.be.at.least(1)
  })

  it('leads ChainVerifier to the verdicts of recomputing every hash itself', async () => {
    const fast = new ChainVerifier()
    for await (const {links, hashes} of store.scanHashedEvents()) fast.addHashed(links, hashes)
    const slow = new ChainVerifier()
    for await (const event of store.scanEvents()) slow.add(event)
    expect(fast.summary()).to.deep.equal(slow.summary())
    const reasons = fast.summary().invalid_agents.map((agent) => [agent.first_invalid_event_id, agent.reason])
    expect(reasons).to.have.deep.members([
      [eventId(12345), 'hash_mismatch'],
      [eventId(40001), 'hash_mismatch'],
      [eventId(55557), 'broken_link'],
    ])
  })
})
