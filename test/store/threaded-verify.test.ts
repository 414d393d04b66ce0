/**
 * Chain verification with its hashing on worker threads (docs/verification.md, Verification on
 * every core) must give exactly the verdicts of one thread: the same agents invalid, each with the
 * same first failure, for every kind of tampering at any position. The log is a real one (payload
 * commitments, signed events, an erasure); tampered copies of its events are verified both ways,
 * through the scan, the erasure checks and the verifier that GET /v1/verify uses.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import fc from 'fast-check'
import {ChainVerifier, type AllChainsResult} from '../../src/core/chain/index.js'
import {generateSigningJwk, publicJwkOf} from '../../src/core/crypto.js'
import {computeEventHash} from '../../src/core/event/index.js'
import {jwkThumbprint} from '../../src/core/jws/jwk.js'
import {signEvent, type KeyTimeline} from '../../src/core/signature/index.js'
import type {AgentHead, StoredEvent} from '../../src/core/types.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {withErasureChecks} from '../../src/services/erasure-references.js'
import {rowValues} from '../../src/store/event-row.js'
import {hashedBatches, HashThread, type HashingThread} from '../../src/store/hashed-scan.js'
import {removeDir, tempDir} from '../support/harness.js'

const key = generateSigningJwk('Ed25519')
const jwk = publicJwkOf(key)
const GONE = '0190c1a2-7b3c-7d4e-8f90-0123456789ab'

type Tamper = 'payload' | 'prev_link' | 'commitment' | 'erased' | 'signature' | 'action'

/** One kind of tampering applied to a copy of `event` (undefined when it does not apply to it). */
function tampered(event: StoredEvent, kind: Tamper, donor: StoredEvent): StoredEvent | undefined {
  const copy = structuredClone(event)
  switch (kind) {
    case 'payload':
      if (copy.output === undefined) return undefined
      return {...copy, output: {changed: true}}
    case 'prev_link':
      return {...copy, prev_hash: copy.prev_hash.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))}
    case 'commitment':
      if (copy.commitments?.output === undefined) return undefined
      copy.commitments.output = copy.commitments.output.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))
      return copy
    case 'erased': {
      // Erased without an erasure event that covers it.
      if (copy.output === undefined || copy.erased !== undefined) return undefined
      const {output: _output, salts, ...rest} = copy
      const {output: _salt, ...otherSalts} = salts ?? {}
      return {...rest, salts: otherSalts, erased: {output: GONE}} as StoredEvent
    }
    case 'signature': {
      // Another event's signature, under a hash recomputed as the service computes it.
      if (copy.signature === undefined || donor.signature === copy.signature) return undefined
      const forged = {...copy, signature: donor.signature}
      return {...forged, hash: computeEventHash(forged)}
    }
    case 'action':
      return {...copy, action_name: `${copy.action_name}.edited`}
  }
}

describe('chain verification on threads gives the one-thread verdicts', function () {
  this.timeout(180_000)
  let dir: string
  let services: AuditServices
  let events: StoredEvent[]
  let heads: AgentHead[]
  let keys: KeyTimeline
  let signed: StoredEvent[]

  before(async () => {
    dir = await tempDir()
    services = await openAudit({dataDir: dir})
    await services.keys.register('bot', jwkThumbprint(jwk), jwk)
    for (let i = 0; i < 90; i++) {
      const body = {agent_id: `agent-${i % 3}`, action_type: 'TOOL_CALL', action_name: `step.${i}`, output: {i}}
      if (i % 4 === 0) await services.ingest.recordOne(signEvent({...body, agent_id: 'bot'}, key))
      else await services.ingest.recordOne(i % 5 === 0 ? {...body, input: {q: `query ${i}`}} : body)
    }
    const agentZero: StoredEvent[] = []
    for await (const event of services.store.scanEvents({filter: {agent_id: 'agent-0'}})) agentZero.push(event)
    await services.erasure.erase({ids: agentZero.slice(2, 6).map((e) => e.id), reason: 'test'})
    await services.ingest.recordOne({agent_id: 'agent-1', action_type: 'TOOL_CALL', action_name: 'last'})
    events = []
    for await (const event of services.store.scanEvents()) events.push(event)
    heads = (await services.store.chainHeads()).heads
    keys = await services.keys.current()
    signed = events.filter((event) => event.signature !== undefined)
  })

  after(async () => {
    await services.close()
    await removeDir(dir)
  })

  /** The all-agents verdict over these events as stored rows, hashed on threads from `threadFrom` events. */
  async function verdict(
    log: StoredEvent[],
    threadFrom: number,
    startThread?: () => HashingThread,
  ): Promise<AllChainsResult> {
    const rows = log.map((event) => JSON.stringify(rowValues(event)))
    async function* batches() {
      for (let i = 0; i < rows.length; i += 11) yield rows.slice(i, i + 11)
    }
    const plan = {threads: 2, callerHashes: true, threadFrom}
    const scan = hashedBatches(batches(), rows.length, startThread, plan, keys.jwks())
    const verifier = new ChainVerifier(heads, keys)
    for await (const batch of withErasureChecks(services.store, scan)) {
      verifier.addHashed(batch.links, batch.hashes, batch.signatures)
    }
    return verifier.summary()
  }

  it('finds the genuine log valid both ways (signed events, an erasure)', async () => {
    expect(signed.length).to.be.above(20)
    expect(events.filter((event) => event.erased !== undefined)).to.have.length(4)
    const threaded = await verdict(events, 0)
    expect(threaded).to.deep.equal(await verdict(events, Infinity))
    expect(threaded).to.include({valid: true, events_checked: events.length})
  })

  it('names each kind of tampering at the tampered event, on threads as on one thread', async () => {
    const expected: Record<Tamper, string> = {
      payload: 'commitment_mismatch',
      prev_link: 'broken_link',
      commitment: 'hash_mismatch',
      erased: 'commitment_mismatch',
      signature: 'bad_signature',
      action: 'hash_mismatch',
    }
    for (const [kind, reason] of Object.entries(expected) as Array<[Tamper, string]>) {
      // Late in the log, so that the failure is not in the first batch.
      const candidates = events.flatMap((event, i) => (i > 40 && tampered(event, kind, signed[0]!) ? [i] : []))
      const at = candidates[candidates.length - 1]!
      const log = events.slice()
      log[at] = tampered(events[at]!, kind, signed[0]!)!
      const threaded = await verdict(log, 0)
      expect(threaded, kind).to.deep.equal(await verdict(log, Infinity))
      expect(threaded.invalid_agents, kind).to.have.length(1)
      expect(threaded.invalid_agents[0], kind).to.include({first_invalid_event_id: events[at]!.id, reason})
    }
  })

  it('reports the same first failures for any tampering at any positions', async () => {
    // Two threads for every run (their stop is the test's), so that runs do not pay for start-ups.
    const pool = [new HashThread(keys.jwks()), new HashThread(keys.jwks())]
    let next = 0
    const shared = () => ({hash: (rows: string[]) => pool[next++ % 2]!.hash(rows), stop: async () => {}})
    const kinds: Tamper[] = ['payload', 'prev_link', 'commitment', 'erased', 'signature', 'action']
    const change = fc.tuple(fc.constantFrom(...kinds), fc.nat(events.length - 1), fc.nat(signed.length - 1))
    await fc
      .assert(
        fc.asyncProperty(fc.array(change, {minLength: 1, maxLength: 4}), async (changes) => {
          const log = events.slice()
          for (const [kind, at, donor] of changes) log[at] = tampered(log[at]!, kind, signed[donor]!) ?? log[at]!
          expect(await verdict(log, 0, shared)).to.deep.equal(await verdict(log, Infinity))
        }),
        {numRuns: 40},
      )
      .finally(() => Promise.all(pool.map((thread) => thread.stop())))
    expect(next).to.be.above(40)
  })

  it('hashes on threads only from the threshold on', async () => {
    let started = 0
    const counting = () => {
      started++
      return {hash: async () => Promise.reject(new Error('unused')), stop: async () => {}}
    }
    await verdict(events, events.length + 1, counting)
    expect(started).to.equal(0)
    // Threads that fail every batch: the batches are hashed here, with the same verdict.
    expect(await verdict(events, events.length, counting)).to.deep.equal(await verdict(events, Infinity))
    expect(started).to.equal(2)
  })

  it('fails the verification when hashing fails, on a thread or here, instead of giving a verdict', async () => {
    const log: unknown[] = events.slice()
    log[50] = 'a row that is no JSON'
    const rows = log.map((event) =>
      typeof event === 'string' ? event : JSON.stringify(rowValues(event as StoredEvent)),
    )
    for (const threadFrom of [0, Infinity]) {
      async function* batches() {
        for (let i = 0; i < rows.length; i += 11) yield rows.slice(i, i + 11)
      }
      const scan = hashedBatches(batches(), rows.length, undefined, {threads: 2, callerHashes: true, threadFrom})
      const verifier = new ChainVerifier(heads, keys)
      let failure: unknown
      try {
        for await (const batch of scan) verifier.addHashed(batch.links, batch.hashes, batch.signatures)
      } catch (error) {
        failure = error
      }
      expect(failure, `threadFrom ${threadFrom}`).to.be.instanceOf(Error)
    }
  })

  it('leaves no thread that keeps the process alive, also when the reader stops early', async () => {
    const rows = events.slice(0, 40).map((event) => JSON.stringify(rowValues(event)))
    const module = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/store/hashed-scan.ts')
    // A process that scans on two threads, stops reading after one batch, and never calls exit.
    const script = path.join(dir, 'scan.mts')
    await writeFile(
      script,
      `const {hashedBatches} = await import(${JSON.stringify(module)})
      const rows = ${JSON.stringify(rows)}
      async function* batches() { for (let i = 0; i < rows.length; i += 5) yield rows.slice(i, i + 5) }
      const plan = {threads: 2, callerHashes: false, threadFrom: 0}
      for await (const batch of hashedBatches(batches(), rows.length, undefined, plan)) {
        console.log(batch.hashes.length)
        break
      }`,
    )
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], {encoding: 'utf8', timeout: 60_000})
    expect(child.stderr).to.equal('')
    expect(child.signal, 'killed after 60 s').to.equal(null)
    expect(child.status).to.equal(0)
    expect(child.stdout.trim()).to.equal('5')
  })
})
