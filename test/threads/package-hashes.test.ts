/**
 * `verify --package` with its hashing on a worker thread (threads/package-hashes.ts): the same
 * verdict and the same first failure as on one thread, for the genuine corpus package and for each
 * kind of tampering a hash decides, whichever runs of events the thread took; and a thread that
 * stops leaves the verification to compute its hashes, with the same verdict.
 */
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {readPackageFile} from '../../src/cli/package-file.js'
import {recomputeHash} from '../../src/core/chain/index.js'
import {PackageParser} from '../../src/core/evidence/package-parser.js'
import {verifyPackage, type PackageVerification} from '../../src/core/evidence/verify.js'
import type {StoredEvent} from '../../src/core/types.js'
import {PackageHashing, runHashes} from '../../src/threads/package-hashes.js'
import {recordCorpusLog, exportPackage} from '../core/evidence/corpus-log.js'
import {useTestApi} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'

/** Parses `bytes` in chunks of `chunk` bytes, telling `hashing` of each run of events. */
function parse(bytes: Buffer, chunk: number, hashing?: PackageHashing) {
  const parser = new PackageParser(hashing && ((text, count, before) => hashing.add(text, count, before)))
  for (let i = 0; i < bytes.length; i += chunk) parser.push(bytes.subarray(i, i + chunk))
  return parser.finish()
}

/** The verdict with a hashing thread from the first event on, and the one-thread verdict. */
async function bothWays(
  pkg: unknown,
  chunk: number,
  stopEarly = false,
): Promise<{threaded: PackageVerification; alone: PackageVerification}> {
  // A number past what a double holds becomes Infinity in JSON.parse, which RFC 8785 cannot hash.
  const bytes = Buffer.from(JSON.stringify(pkg).replace('"__HUGE__"', '1e400'))
  const hashes = new PackageHashing(1, 0)
  try {
    const parsed = parse(bytes, chunk, hashes)
    if (stopEarly) await hashes.stop()
    const threaded = await verifyPackage(parsed, {hashes})
    return {threaded, alone: await verifyPackage(parse(bytes, chunk))}
  } finally {
    await hashes.stop()
  }
}

describe('threads/package-hashes: verify --package with a hashing thread', function () {
  this.timeout(60_000)
  const api = useTestApi({}, 'suite')
  const dir = useTempDir()
  let genuine: any

  before(async () => {
    const extra = Array.from({length: 40}, (_, i) => ({
      action_name: `x${i}`,
      input: {n: i, text: `é ${i}`},
      metadata: {k: [i, null]},
    }))
    await recordCorpusLog(api, extra)
    genuine = await exportPackage(api)
  })

  it('runHashes gives recomputeHash of each event of a run, null for an element that is no object', () => {
    const events = genuine.events.slice(0, 3) as StoredEvent[]
    const text = [...events.map((event) => JSON.stringify(event)), '7', 'null'].join(',')
    expect(runHashes(text)).to.deep.equal([...events.map((event) => recomputeHash(event)), null, null])
  })

  it('hands two runs of three to one thread, from the threshold on', () => {
    const hashes = new PackageHashing(1, 10)
    for (let run = 0; run < 8; run++) hashes.add('{}', 4, run * 4)
    // Runs 0 and 1 end below 10 events; of runs 2..7, every third is left to the caller.
    const owners = Array.from({length: 8}, (_, run) => (hashes.hashAt(run * 4) === null ? 'caller' : 'thread'))
    void hashes.stop()
    expect(owners).to.deep.equal(['caller', 'caller', 'thread', 'thread', 'caller', 'thread', 'thread', 'caller'])
  })

  it("the thread's hashes are recomputeHash of the events the caller parsed, for two runs of three", async () => {
    const hashes = new PackageHashing(1, 0)
    try {
      const parsed = parse(Buffer.from(JSON.stringify(genuine)), 512, hashes)
      const given: Array<string | null> = []
      for (let i = 0; i < parsed.events.length; i++) given.push(await hashes.hashAt(i))
      const computed = given.filter((hash) => hash !== null)
      expect(computed.length).to.be.within(parsed.events.length / 2, parsed.events.length - 1)
      given.forEach((hash, i) => {
        if (hash !== null) expect(hash, `event ${i}`).to.equal(recomputeHash(parsed.events[i]!))
      })
    } finally {
      await hashes.stop()
    }
  })

  it('reads a package file with the thread as verify --package does, and it verifies', async () => {
    const hashes = new PackageHashing(1, 0)
    try {
      const file = path.join(dir, 'p.atrail.json')
      await writeFile(file, JSON.stringify(genuine))
      const pkg = await readPackageFile(file, hashes)
      expect(await hashes.hashAt(0)).to.equal(recomputeHash(pkg.events[0]!))
      expect(await verifyPackage(pkg, {hashes})).to.include({valid: true})
    } finally {
      await hashes.stop()
    }
  })

  for (const chunk of [256, 4096]) {
    it(`verifies the genuine package as one thread does, in chunks of ${chunk} bytes`, async () => {
      const {threaded, alone} = await bothWays(genuine, chunk)
      expect(alone.valid, JSON.stringify(alone.failure)).to.equal(true)
      expect(threaded).to.deep.equal(alone)
    })
  }

  const tamperings: Array<[string, (pkg: any) => void]> = [
    ['a payload changed', (pkg) => (pkg.events[30].input = {n: -1})],
    ['a hash changed', (pkg) => (pkg.events[12].hash = 'ab'.repeat(32))],
    ['a link broken', (pkg) => (pkg.events[25].prev_hash = 'cd'.repeat(32))],
    ['a salt changed (a commitment that no longer holds)', (pkg) => (pkg.events[33].salts.input = 'ef'.repeat(32))],
    ['an event that is no object', (pkg) => (pkg.events[20] = 7)],
    ['a number RFC 8785 cannot hash', (pkg) => (pkg.events[28].input = {n: '__HUGE__'})],
  ]
  for (const [what, change] of tamperings) {
    it(`names the same first failure as one thread: ${what}`, async () => {
      const pkg = structuredClone(genuine)
      change(pkg)
      const {threaded, alone} = await bothWays(pkg, 512)
      expect(alone.valid).to.equal(false)
      expect(threaded).to.deep.equal(alone)
    })
  }

  it('computes the hashes itself when the thread stopped before answering, with the same verdicts', async () => {
    const good = await bothWays(genuine, 512, true)
    expect(good.threaded).to.deep.equal(good.alone)
    expect(good.threaded.valid).to.equal(true)
    const pkg = structuredClone(genuine)
    pkg.events[31].input = {n: -2}
    const bad = await bothWays(pkg, 512, true)
    expect(bad.threaded).to.deep.equal(bad.alone)
    expect(bad.threaded.failure?.check).to.equal('event_hash')
  })
})
