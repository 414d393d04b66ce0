import {spawn} from 'node:child_process'
import {readdir, readFile} from 'node:fs/promises'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect} from 'chai'
import pg from 'pg'
import {AuditError} from '../../src/core/errors.js'
import {TRAIL_NAME_RULE} from '../../src/core/trail/name.js'
import type {AuditOptions} from '../../src/services/audit.js'
import {openTrails} from '../../src/services/trail-registry.js'
import type {Trails} from '../../src/services/trails.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'
import {createTestDatabase, forEachStore, postgresAvailable, type StoreKind} from '../support/stores.js'

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'create-trails-child.ts')

/** The error `promise` rejects with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<AuditError> {
  try {
    await promise
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    return error as AuditError
  }
  return expect.fail('resolved')
}

/** A data directory, and for PostgreSQL a database, for each test; `open` opens trails on them (closed after). */
export function trailsPerTest(store: StoreKind): {
  options: AuditOptions
  open(extra?: Partial<AuditOptions>): Promise<Trails>
} {
  const opened: Trails[] = []
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined
  const ctx = {
    options: {} as AuditOptions,
    async open(extra: Partial<AuditOptions> = {}) {
      const trails = await openTrails({...ctx.options, ...extra})
      opened.push(trails)
      return trails
    },
  }
  beforeEach(async () => {
    database = store === 'postgres' ? await createTestDatabase() : undefined
    ctx.options = {dataDir: await tempDir(), databaseUrl: database?.url}
  })
  afterEach(async () => {
    for (const trails of opened.splice(0)) await trails.close().catch(() => undefined)
    await database?.drop()
    await removeDir(ctx.options.dataDir)
  })
  return ctx
}

describe('trails of a service (openTrails)', function () {
  this.timeout(60_000)

  forEachStore((store) => {
    const ctx = trailsPerTest(store)

    it('creates trails with the service origin followed by their name, lists them and keeps each open', async () => {
      const trails = await ctx.open({origin: 'audit.example.com/log'})
      expect(await trails.names()).to.deep.equal(['default'])
      const payments = await trails.create('payments')
      expect(payments).to.include({name: 'payments', origin: 'audit.example.com/log/payments', tree_size: 0})
      expect(payments.sealed).to.equal(false)
      expect(payments.verifier_key).to.match(/^audit\.example\.com\/log\/payments\+[0-9a-f]{8}\+/)
      const named = await trails.create('q4-2026', {origin: 'audit.example.com/q4'})
      expect(named.origin).to.equal('audit.example.com/q4')
      expect(await trails.names()).to.deep.equal(['default', 'payments', 'q4-2026'])
      const listed = await trails.list()
      expect(listed.map((t) => [t.name, t.origin])).to.deep.equal([
        ['default', 'audit.example.com/log'],
        ['payments', 'audit.example.com/log/payments'],
        ['q4-2026', 'audit.example.com/q4'],
      ])
      expect(new Set(listed.map((t) => t.verifier_key.split('+')[2])).size).to.equal(3)
      expect((await trails.list(['q4-2026'])).map((t) => t.name)).to.deep.equal(['q4-2026'])
      expect(await trails.open('payments')).to.equal(await trails.open('payments'))
      expect(await trails.open('default')).to.equal(trails.default)
    })

    it('refuses a bad name (400 naming the rule), an existing trail or origin 409, unknown 404', async () => {
      const trails = await ctx.open()
      for (const name of ['Payments', 'pay_ments', '-x', '', 'a'.repeat(64)]) {
        const error = await rejection(trails.create(name))
        expect(error.code).to.equal('validation_error')
        expect(error.message).to.include(TRAIL_NAME_RULE)
      }
      await trails.create('payments')
      expect((await rejection(trails.create('payments'))).code).to.equal('conflict')
      expect((await rejection(trails.create('default'))).code).to.equal('conflict')
      const origin = (await trails.list(['payments']))[0]!.origin
      expect((await rejection(trails.create('other', {origin}))).message).to.include('trail payments')
      expect((await rejection(trails.create('other', {origin: 'two words'}))).code).to.equal('validation_error')
      for (const name of ['nothing', 'Bad_Name']) {
        const error = await rejection(trails.open(name))
        expect([error.code, error.message]).to.deep.equal(['trail_not_found', error.message])
        expect(error.message).to.include(name)
        expect((await rejection(trails.seal(name))).code).to.equal('trail_not_found')
      }
      expect(await trails.names()).to.deep.equal(['default', 'payments'])
    })

    it('keeps two trails apart: their own events, roots, chains and origins', async () => {
      const trails = await ctx.open()
      await trails.create('a')
      await trails.create('b')
      const [a, b] = [await trails.open('a'), await trails.open('b')]
      await a.ingest.recordBatch([makeEvent(), makeEvent(), makeEvent({agent_id: 'agent-2'})])
      await b.ingest.recordOne(makeEvent())
      expect((await a.integrity.merkleRoot()).tree_size).to.equal(3)
      expect((await b.integrity.merkleRoot()).tree_size).to.equal(1)
      expect((await trails.default.integrity.merkleRoot()).tree_size).to.equal(0)
      expect((await a.query.agents()).map((agent) => agent.last_sequence)).to.deep.equal([2, 1])
      expect((await b.query.agents()).map((agent) => agent.last_sequence)).to.deep.equal([1])
      expect((await a.integrity.verifyAll()).valid).to.equal(true)
      const [first] = (await a.query.listEvents({})).events
      await rejection(b.query.getEvent(first!.id)).then((error) => expect(error.code).to.equal('not_found'))
      expect((await trails.list()).map((t) => t.tree_size)).to.deep.equal([0, 3, 1])
    })

    it('seals: a final checkpoint, 409 trail_sealed for every append, still readable; twice is a no-op', async () => {
      const trails = await ctx.open()
      await trails.create('q3')
      const q3 = await trails.open('q3')
      await q3.ingest.recordBatch([makeEvent({input: {a: 1}}), makeEvent()])
      const sealed = await trails.seal('q3')
      expect(sealed).to.include({name: 'q3', sealed: true, tree_size: 2})
      const checkpoints = await q3.store.listCheckpoints()
      expect(checkpoints.at(-1)!.tree_size).to.equal(2)
      expect(checkpoints.at(-1)!.note.startsWith(`${sealed.origin}\n2\n`)).to.equal(true)
      const refusals = [
        () => q3.ingest.recordOne(makeEvent()),
        () => q3.ingest.recordBatch([makeEvent()]),
        () => q3.ingest.recordInternal({agent_id: 'audit-trail:keys', action_type: 'KEY_REGISTERED', action_name: 'k'}),
        () => q3.erasure.erase({filter: {agent_id: 'agent-1'}, reason: 'asked'}),
        () =>
          q3.approvals.request({
            agent_id: 'agent-1',
            action_type: 'TOOL_CALL',
            action_name: 'payments.refund',
            call_event_id: '018f0000-0000-4000-8000-00000000000a',
            rule: 'refunds',
            rule_type: 'forbidden_action',
          }),
      ]
      for (const refusal of refusals) {
        const error = await rejection(refusal())
        expect([error.code, error.status]).to.deep.equal(['trail_sealed', 409])
        expect(error.message).to.include('trail q3 is sealed')
      }
      expect((await q3.integrity.merkleRoot()).tree_size).to.equal(2)
      expect((await q3.integrity.verifyAll()).valid).to.equal(true)
      expect((await q3.query.listEvents({})).events[0]!.input).to.deep.equal({a: 1})
      // A timestamp of the final root does not change the trail (docs/trails.md, Sealing).
      expect((await q3.timestamps.issue()).tree_size).to.equal(2)
      expect(await trails.seal('q3')).to.deep.equal(sealed)
      expect(await q3.store.listCheckpoints()).to.have.length(checkpoints.length)
      // The other trails take events as before.
      expect((await trails.default.ingest.recordOne(makeEvent())).status).to.equal(201)
    })

    it('keeps origins and the seal across a restart', async () => {
      let trails = await ctx.open({origin: 'log.example'})
      await trails.create('open-one')
      await trails.create('closed', {origin: 'elsewhere.example/closed'})
      await trails.seal('closed')
      const before = await trails.list()
      await trails.close()
      trails = await ctx.open({origin: 'another.example'})
      const after = await trails.list()
      expect(after.slice(1)).to.deep.equal(before.slice(1))
      expect(after[0]!.origin).to.equal('another.example')
      const error = await rejection((await trails.open('closed')).ingest.recordOne(makeEvent()))
      expect(error.code).to.equal('trail_sealed')
    })

    it('uses the service TSA for every trail, and makes none of its own', async () => {
      const trails = await ctx.open()
      await trails.create('t')
      const token = await (await trails.open('t')).timestamps.issue()
      expect(token.tsa).to.equal((await trails.default.timestamps.issue()).tsa)
      expect(await (await trails.open('t')).timestamps.trustAnchorsPem()).to.deep.equal(
        await trails.default.timestamps.trustAnchorsPem(),
      )
      if (store === 'sqljs') {
        expect(await readdir(path.join(ctx.options.dataDir, 'trails', 't'))).to.not.include('tsa')
        const meta = JSON.parse(await readFile(path.join(ctx.options.dataDir, 'trails', 't', 'trail.json'), 'utf8'))
        expect(meta).to.include({name: 't'})
      }
    })
  })
})

describe('trails on PostgreSQL', function () {
  this.timeout(60_000)
  const ctx = trailsPerTest('postgres')
  let other: Awaited<ReturnType<typeof createTestDatabase>> | undefined
  const services: Awaited<ReturnType<typeof createTestDatabase>>[] = []
  before(async function () {
    if (!(await postgresAvailable())) this.skip()
  })
  afterEach(async () => {
    await other?.drop()
    other = undefined
    for (const database of services.splice(0)) await database.drop()
  })

  /** The database of another service. */
  async function anotherService(): Promise<string> {
    const database = await createTestDatabase()
    services.push(database)
    return database.url
  }

  /** The rows of `sql` on the database of `url`. */
  async function rows(url: string, sql: string): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({connectionString: url})
    await client.connect()
    try {
      return (await client.query(sql)).rows
    } finally {
      await client.end()
    }
  }

  it('puts a trail in a schema of its own, in one transaction with its registry row', async () => {
    const trails = await ctx.open()
    await trails.create('payments')
    await (await trails.open('payments')).ingest.recordOne(makeEvent())
    const url = ctx.options.databaseUrl!
    expect(await rows(url, `SELECT count(*)::int AS n FROM trail_payments.events`)).to.deep.equal([{n: 1}])
    expect(await rows(url, `SELECT count(*)::int AS n FROM public.events`)).to.deep.equal([{n: 0}])
    expect(await rows(url, 'SELECT name, schema, database_url FROM trails')).to.deep.equal([
      {name: 'payments', schema: 'trail_payments', database_url: null},
    ])
    // A schema of that name already there: the create fails whole, its registry row included.
    await rows(url, 'CREATE SCHEMA trail_taken')
    expect((await rejection(trails.create('taken'))).message).to.include('schema trail_taken')
    expect(await trails.names()).to.deep.equal(['default', 'payments'])
  })

  it('refuses an append sealed by another process, under the sequencer lock', async () => {
    const [one, two] = [await ctx.open(), await ctx.open()]
    await one.create('q1')
    const writer = await one.open('q1')
    await writer.ingest.recordOne(makeEvent())
    expect((await two.seal('q1')).sealed).to.equal(true)
    const error = await rejection(writer.ingest.recordOne(makeEvent()))
    expect(error.code).to.equal('trail_sealed')
    expect((await one.list(['q1']))[0]).to.include({sealed: true, tree_size: 1})
    // Appends racing a seal are each either before it (in the sealed tree) or refused.
    await one.create('q2')
    const racing = await one.open('q2')
    const outcomes = await Promise.allSettled([
      ...Array.from({length: 20}, () => racing.ingest.recordOne(makeEvent())),
      two.seal('q2'),
      ...Array.from({length: 20}, () => racing.ingest.recordOne(makeEvent())),
    ])
    const recorded = outcomes.filter((o, i) => i !== 20 && o.status === 'fulfilled').length
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') expect(outcome.reason.code).to.equal('trail_sealed')
    const final = (await (await two.open('q2')).store.listCheckpoints()).at(-1)!
    expect([final.tree_size, await racing.store.count()]).to.deep.equal([recorded, recorded])
  })

  it('puts a trail in another database (--in-database), found there by every process', async () => {
    other = await createTestDatabase({empty: true})
    const trails = await ctx.open()
    const info = await trails.create('tenant-a', {inDatabase: other.url})
    await (await trails.open('tenant-a')).ingest.recordBatch([makeEvent(), makeEvent()])
    expect(await rows(other.url, 'SELECT count(*)::int AS n FROM "trail_tenant-a".events')).to.deep.equal([{n: 2}])
    expect(await rows(ctx.options.databaseUrl!, 'SELECT database_url FROM trails')).to.deep.equal([
      {database_url: other.url},
    ])
    const second = await ctx.open()
    expect(await second.list(['tenant-a'])).to.deep.equal([{...info, tree_size: 2}])
    expect((await rejection(second.create('tenant-a', {inDatabase: other.url}))).code).to.equal('conflict')
  })

  it('takes over the empty schema a crash between the two databases left, and nothing else', async () => {
    other = await createTestDatabase({empty: true})
    // A service whose registry row never committed: its schema in the other database names the trail.
    const crashed = await ctx.open()
    await crashed.create('tenant-b', {inDatabase: other.url})
    await crashed.close()
    const service = await ctx.open({databaseUrl: await anotherService()})
    const taken = await service.create('tenant-b', {inDatabase: other.url})
    expect(taken).to.include({name: 'tenant-b', tree_size: 0})
    await (await service.open('tenant-b')).ingest.recordOne(makeEvent())
    // Once it holds an event, it is a trail of its own: never taken over.
    const third = await ctx.open({databaseUrl: await anotherService()})
    expect((await rejection(third.create('tenant-b', {inDatabase: other.url}))).message).to.include(
      'schema trail_tenant-b',
    )
    expect(await third.names()).to.deep.equal(['default'])
  })
})

describe('trails create on a data directory killed at any moment', function () {
  this.timeout(120_000)
  let dataDir: string
  beforeEach(async () => {
    dataDir = await tempDir()
  })
  afterEach(() => removeDir(dataDir))

  /** Runs the child until it created a trail, kills it with SIGKILL `delayMs` later; resolves with what it said. */
  function createAndKill(delayMs: number): Promise<string[]> {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir], {stdio: ['ignore', 'pipe', 'inherit']})
    let said = ''
    return new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (said === '') setTimeout(() => child.kill('SIGKILL'), delayMs)
        said += chunk.toString()
      })
      child.on('error', reject)
      child.on('exit', () => resolve(said.split('\n').filter((line) => line.startsWith('created '))))
    })
  }

  it('leaves each trail whole or absent: every acknowledged one opens, no directory is half made', async () => {
    const acknowledged: string[] = []
    for (const delayMs of [0, 3, 7, 15, 40]) {
      acknowledged.push(...(await createAndKill(delayMs)).map((line) => line.slice('created '.length)))
      const trails = await openTrails({dataDir})
      try {
        const names = await trails.names()
        expect(names).to.include.members(acknowledged)
        // What a kill left in trails/ (a staging directory) is gone; every other entry is a trail.
        expect(['default', ...(await readdir(path.join(dataDir, 'trails'))).sort()]).to.deep.equal([
          'default',
          ...names.slice(1).sort(),
        ])
        for (const info of await trails.list())
          expect(info.verifier_key).to.include(info.name === 'default' ? '' : `/${info.name}+`)
      } finally {
        await trails.close()
      }
    }
    expect(acknowledged.length).to.be.greaterThan(4)
  })
})

describe('many trails open in one process', () => {
  it('holds a lock per trail without a warning about exit listeners, and frees each at close', async () => {
    const dir = await tempDir()
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    const exitListeners = process.listenerCount('exit')
    try {
      const trails = await openTrails({dataDir: dir})
      for (let i = 0; i < 12; i++) await trails.open((await trails.create(`t${i}`)).name)
      expect(process.listenerCount('exit') - exitListeners).to.be.at.most(1)
      await trails.close()
      expect(await readdir(path.join(dir, 'trails', 't0'))).to.not.include('store.lock')
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).to.not.include('MaxListenersExceededWarning')
    } finally {
      process.off('warning', onWarning)
      await removeDir(dir)
    }
  })
})
