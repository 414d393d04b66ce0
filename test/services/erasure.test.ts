/**
 * Erasure through the services on both stores (docs/erasure.md): what is erased, what is skipped,
 * that the erased values appear in no answer, and that every proof still holds.
 */
import {execFileSync} from 'node:child_process'
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {PassThrough} from 'node:stream'
import {expect} from 'chai'
import {AuditError} from '../../src/core/errors.js'
import type {EvidencePackage} from '../../src/core/evidence/package.js'
import {verifyPackage} from '../../src/core/evidence/verify.js'
import type {EventInput, StoredEvent} from '../../src/core/types.js'
import type {AuditServices} from '../../src/services/audit.js'
import {PayloadRetention} from '../../src/services/retention.js'
import {openAudit} from '../../src/services/audit.js'
import {makeEvent, removeDir, servicesPerTest, tempDir} from '../support/harness.js'
import {newMarker} from '../support/markers.js'
import {createTestDatabase, forEachStore, postgresAvailable, rowsOf} from '../support/stores.js'

async function exportText(services: AuditServices, redact: string[] = [], filter = {}): Promise<string> {
  const out = new PassThrough()
  const chunks: Buffer[] = []
  out.on('data', (chunk: Buffer) => chunks.push(chunk))
  await services.exporter.writePackage(filter, out, new Date(), redact as never)
  out.end()
  return Buffer.concat(chunks).toString('utf8')
}

/** Every event and the search result for `marker`, as a client would read them. */
async function answers(services: AuditServices, marker: string): Promise<string> {
  const events = await services.query.listEvents({limit: '1000'})
  // The search answer without its `query`, which echoes the marker asked for.
  const {query: _query, ...search} = await services.query.search({q: marker})
  const one = await Promise.all(events.events.map((event) => services.query.getEvent(event.id)))
  return JSON.stringify([events, search, one]) + (await exportText(services))
}

/** An event of hash version 1 (recorded before commitments): its payload is in its hash, not committed. */
async function recordVersion1(services: AuditServices, input: string): Promise<StoredEvent> {
  const event: EventInput = {
    id: '0190c1a2-7b3c-7d4e-8f90-00000000000' + String(Math.floor(Math.random() * 10)),
    agent_id: 'legacy',
    action_type: 'TOOL_CALL',
    action_name: 'old',
    action_status: 'success',
    timestamp: new Date().toISOString(),
    labels: {},
    input,
  }
  const {recorded} = await services.store.recordEvents([
    {items: [{event, sent: []}], recordedAt: new Date().toISOString(), resolve: () => {}, reject: () => {}} as never,
  ])
  await services.refresh()
  return recorded[0]!
}

describe('ErasureService (docs/erasure.md)', function () {
  this.timeout(60_000)
  forEachStore((store) => {
    const ctx = servicesPerTest(store)

    it('erases by filter: the erasure event first, then the members and salts, every proof intact', async () => {
      const {services} = ctx
      const marker = newMarker()
      const kept = newMarker()
      const bodies = Array.from({length: 30}, (_, i) =>
        makeEvent({
          agent_id: `agent-${i % 3}`,
          labels: {customer: i % 2 === 0 ? 'c-1' : 'c-2'},
          input: {prompt: `${i % 2 === 0 ? marker : kept} ${i}`},
          output: 'an answer',
          error: i % 4 === 0 ? `failed for ${i % 2 === 0 ? marker : kept}` : undefined,
        }),
      )
      await services.ingest.recordBatch(bodies)
      expect((await services.query.search({q: marker})).total).to.equal(15)
      const before = await services.integrity.merkleRoot()
      const result = await services.erasure.erase({
        filter: {labels: {customer: 'c-1'}},
        members: ['input', 'error'],
        reason: 'GDPR Art. 17 request 4711',
        requested_by: 'dpo@example.com',
      })
      expect(result.erased_events).to.equal(15)
      expect(result.erased_members).to.equal(15 + 8)
      expect(result.skipped).to.deep.equal([])
      const erasure = result.erasure!
      expect(erasure).to.include({agent_id: 'audit-trail:erasures', action_type: 'ERASURE'})
      expect(erasure.action_name).to.equal('payload.erase')
      expect(erasure.index).to.equal(30)
      expect(erasure.metadata).to.deep.equal({
        reason: 'GDPR Art. 17 request 4711',
        members: ['input', 'error'],
        filter: {labels: {customer: 'c-1'}},
        before_index: 30,
        count: 15,
        requested_by: 'dpo@example.com',
      })
      const events = (await services.query.listEvents({'label.customer': 'c-1', limit: '100'})).events
      for (const event of events) {
        expect(event).to.not.have.any.keys('input', 'error')
        expect(Object.keys(event.salts!)).to.deep.equal(['output'])
        expect(event.erased).to.deep.equal(
          event.commitments!.error ? {input: erasure.id, error: erasure.id} : {input: erasure.id},
        )
      }
      expect(await answers(services, marker)).to.not.include(marker)
      expect(await answers(services, kept)).to.include(kept)
      expect((await services.query.search({q: kept})).total).to.equal(15)
      expect(await services.integrity.verifyAll()).to.include({valid: true, events_checked: 31})
      // The tree only grew by the erasure event: every earlier root and proof stands.
      const consistency = await services.integrity.consistency(before.tree_size)
      expect(consistency.first_root).to.equal(before.merkle_root)
      const pkg = JSON.parse(await exportText(services)) as EvidencePackage
      expect(pkg.version).to.equal(2)
      expect(pkg.erasures!.map((entry) => entry.event.id)).to.deep.equal([erasure.id])
      const verdict = await verifyPackage(pkg)
      expect(verdict.failure).to.equal(undefined)
      expect(verdict.erasures).to.equal(1)
    })

    it('erases by ids, skipping what cannot or need not be erased, and records nothing the second time', async () => {
      const {services} = ctx
      const marker = newMarker()
      const [full, bare] = (
        await services.ingest.recordBatch([
          makeEvent({input: marker, metadata: {k: marker}}),
          makeEvent({action_name: 'no payload'}),
        ])
      ).results.map((r) => (r as {event: StoredEvent}).event)
      const legacy = await recordVersion1(services, 'recorded before commitments')
      const missing = '0190c1a2-7b3c-7d4e-8f90-ffffffffffff'
      const body = {ids: [full!.id, bare!.id, legacy.id, missing], reason: 'request'}
      const first = await services.erasure.erase(body)
      expect(first).to.deep.include({erased_events: 1, erased_members: 2})
      expect(first.skipped).to.deep.equal([
        {id: bare!.id, reason: 'no_payload'},
        {id: legacy.id, reason: 'hash_version_1'},
        {id: missing, reason: 'not_found'},
      ])
      expect(first.erasure!.metadata).to.deep.equal({
        reason: 'request',
        members: ['input', 'output', 'metadata', 'error'],
        ids: {[full!.id]: ['input', 'metadata']},
      })
      const size = await services.store.count()
      const again = await services.erasure.erase(body)
      expect(again).to.deep.include({erasure: null, erased_events: 0, erased_members: 0})
      expect(again.skipped[0]).to.deep.equal({id: full!.id, reason: 'already_erased'})
      expect(await services.store.count()).to.equal(size)
      // The erasure's own event is the service's: never erased, its reason stays on record.
      const own = await services.erasure.erase({ids: [first.erasure!.id], reason: 'cover tracks'})
      expect(own.skipped).to.deep.equal([{id: first.erasure!.id, reason: 'service_event'}])
      expect((await services.query.getEvent(legacy.id)).input).to.equal('recorded before commitments')
      expect(await answers(services, marker)).to.not.include(marker)
      expect(await services.integrity.verifyAll()).to.include({valid: true})
    })

    it('a retry of an erased event with its original payload is still the same event (200)', async () => {
      const {services} = ctx
      const body = makeEvent({id: '0190c1a2-7b3c-7d4e-8f90-0123456789ab', input: {q: newMarker()}, output: 'o'})
      await services.ingest.recordOne(body)
      await services.erasure.erase({ids: [body.id], members: ['input'], reason: 'r'})
      const retry = await services.ingest.recordOne(body)
      expect(retry.status).to.equal(200)
      expect(retry.event).to.not.have.property('input')
    })

    it('refuses bad input with validation_error and records nothing', async () => {
      const {services} = ctx
      await services.ingest.recordBatch([makeEvent({input: 'x'})])
      const size = await services.store.count()
      for (const body of [
        {filter: {agent_id: 'agent-1'}},
        {filter: {}, reason: 'r'},
        {filter: {agent_id: 'agent-1'}, members: ['prompt'], reason: 'r'},
        {ids: Array.from({length: 10_001}, () => '0190c1a2-7b3c-7d4e-8f90-0123456789ab'), reason: 'r'},
      ]) {
        const error = await services.erasure.erase(body).catch((e: unknown) => e)
        expect(error, JSON.stringify(body).slice(0, 80)).to.be.instanceOf(AuditError)
        expect((error as AuditError).code).to.equal('validation_error')
      }
      expect(await services.store.count()).to.equal(size)
      expect((await services.query.getEvent((await services.query.listEvents({})).events[0]!.id)).input).to.equal('x')
    })

    it('an export that meets an erasure recorded after its tree fails rather than write a bad package', async () => {
      const {services} = ctx
      const results = await services.ingest.recordBatch([makeEvent({input: 'a'}), makeEvent({input: 'b'})])
      const ids = results.results.map((r) => (r as {event: StoredEvent}).event.id)
      // The erasure runs once the export has read its tree, before it reads the events (a later batch).
      const scan = services.store.scanEvents.bind(services.store)
      services.store.scanEvents = (options) =>
        (async function* () {
          await services.erasure.erase({ids, reason: 'during the export'})
          for await (const event of scan(options)) yield (await services.store.getEvent(event.id))!
        })()
      const error = await exportText(services).catch((e: unknown) => e)
      services.store.scanEvents = scan
      expect(error).to.be.instanceOf(AuditError)
      expect((error as AuditError).code).to.equal('conflict')
      expect((await verifyPackage(JSON.parse(await exportText(services)) as EvidencePackage)).valid).to.equal(true)
    })

    it('payload retention erases what was recorded before the cutoff, once, as payload.retention', async () => {
      const {services} = ctx
      const marker = newMarker()
      await services.ingest.recordBatch([makeEvent({input: marker}), makeEvent({output: {a: marker}})])
      const retention = new PayloadRetention({
        store: services.store,
        erasure: services.erasure,
        retentionMs: 400 * 86_400_000,
        // Runs a millisecond apart are turns of their own (PostgreSQL: store.claimTurn).
        everyMs: 1,
        log: () => {},
      })
      expect((await retention.run())?.erasure).to.equal(null)
      await new Promise((resolve) => setTimeout(resolve, 5))
      const later = new Date(Date.now() + 401 * 86_400_000)
      const result = (await retention.run(later))!
      expect(result).to.deep.include({erased_events: 2, erased_members: 2, skipped: []})
      expect(result.erasure).to.include({action_name: 'payload.retention', agent_id: 'audit-trail:erasures'})
      expect(result.erasure!.metadata).to.deep.include({before_index: 2, count: 2, filter: {}})
      expect(await answers(services, marker)).to.not.include(marker)
      // The next run, even later: the erasure event itself is the service's and stays whole.
      await services.ingest.recordBatch([makeEvent()])
      await new Promise((resolve) => setTimeout(resolve, 5))
      expect((await retention.run(new Date(later.getTime() + 86_400_000)))?.erasure).to.equal(null)
      expect(await services.integrity.verifyAll()).to.include({valid: true})
    })
  })
})

describe('an erased member that no erasure covers, made behind the service, is found by verify', function () {
  this.timeout(60_000)
  let services: AuditServices | undefined
  afterEach(async () => {
    await services?.close()
    services = undefined
  })

  /** Two events of agent x, the first's input erased by the service; the erasure's id. */
  async function seed(dataDir: string, databaseUrl?: string): Promise<{ids: string[]; erasure: string}> {
    services = await openAudit({dataDir, databaseUrl})
    const results = await services.ingest.recordBatch([
      makeEvent({agent_id: 'x', input: 'one'}),
      makeEvent({agent_id: 'x', input: 'two'}),
    ])
    const ids = results.results.map((r) => (r as {event: StoredEvent}).event.id)
    const erased = await services.erasure.erase({ids: [ids[0]], members: ['input'], reason: 'r'})
    expect(await services.integrity.verifyAgent('x')).to.include({valid: true})
    await services.close()
    services = undefined
    return {ids, erasure: erased.erasure!.id}
  }

  async function verdict(dataDir: string, databaseUrl?: string) {
    services = await openAudit({dataDir, databaseUrl})
    return services.integrity.verifyAgent('x')
  }

  it('[sqljs] the second input removed with sqlite3 and marked as erased by the first erasure', async () => {
    const dataDir = await tempDir()
    try {
      const {ids, erasure} = await seed(dataDir)
      for (const file of await readdir(dataDir)) if (file.startsWith('journal')) await rm(path.join(dataDir, file))
      const erased = `'{"input":"${erasure}"}'`
      const sql = `UPDATE events SET input = NULL, salts = NULL, erased = ${erased} WHERE id = '${ids[1]}'`
      execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), sql])
      const result = await verdict(dataDir)
      expect(result).to.include({valid: false, reason: 'commitment_mismatch', first_invalid_sequence: 2})
    } finally {
      await services?.close()
      services = undefined
      await removeDir(dataDir)
    }
  })

  it('[postgres] the second input removed with SQL, erased by an erasure that does not exist', async function () {
    if (!(await postgresAvailable())) return this.skip()
    const dataDir = await tempDir()
    const database = await createTestDatabase()
    try {
      const {ids} = await seed(dataDir, database.url)
      await rowsOf(database.url, `UPDATE events SET input = NULL, salts = NULL, erased = $1 WHERE id = $2`, [
        JSON.stringify({input: '0190c1a2-7b3c-7d4e-8f90-0123456789ab'}),
        ids[1],
      ])
      const result = await verdict(dataDir, database.url)
      expect(result).to.include({valid: false, reason: 'commitment_mismatch', first_invalid_sequence: 2})
      expect((result as {actual?: string}).actual).to.equal('no such erasure event')
    } finally {
      await services?.close()
      services = undefined
      await database.drop()
      await removeDir(dataDir)
    }
  })
})
