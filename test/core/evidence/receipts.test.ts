import {PassThrough} from 'node:stream'
import path from 'node:path'
import {expect} from 'chai'
import {parsePackageBytes} from '../../../src/core/evidence/package-parser.js'
import {checkPackageReceipts} from '../../../src/core/evidence/receipts.js'
import {EvidenceError} from '../../../src/core/evidence/failures.js'
import {verifyPackage} from '../../../src/core/evidence/verify.js'
import type {EvidencePackage} from '../../../src/core/evidence/package.js'
import {openAudit} from '../../../src/services/audit.js'
import {makeEvent, removeDir, tempDir} from '../../support/harness.js'

async function exportBytes(services: Awaited<ReturnType<typeof openAudit>>): Promise<Buffer> {
  const out = new PassThrough()
  const chunks: Buffer[] = []
  out.on('data', (chunk: Buffer) => chunks.push(chunk))
  await services.exporter.writePackage({}, out, new Date(), {receipts: true})
  out.end()
  return Buffer.concat(chunks)
}

describe('receipts in an evidence package', function () {
  this.timeout(60_000)
  let dir: string
  let bytes: Buffer
  let pkg: EvidencePackage
  let logKey: string
  let otherKey: string

  before(async () => {
    dir = await tempDir()
    const services = await openAudit({dataDir: path.join(dir, 'log')})
    const other = await openAudit({dataDir: path.join(dir, 'other')})
    try {
      await services.ingest.recordBatch(Array.from({length: 9}, (_, i) => makeEvent({action_name: `n-${i}`})))
      bytes = await exportBytes(services)
      logKey = await services.checkpoints.verifierKey()
      otherKey = await other.checkpoints.verifierKey()
    } finally {
      await services.close()
      await other.close()
    }
    pkg = parsePackageBytes(bytes)
  })
  after(async () => {
    await removeDir(dir)
  })

  it('is read in chunks of any size as JSON.parse reads it', () => {
    const whole = JSON.parse(bytes.toString('utf8'))
    expect(Object.keys(whole.receipts)).to.have.length(9)
    for (const size of [1, 7, 100, 4096]) expect(parsePackageBytes(bytes, size)).to.deep.equal(whole)
  })

  it('verifies with the log key, and without it checks everything but kid and signature', async () => {
    expect(checkPackageReceipts(pkg, logKey)).to.deep.include({count: 9, signature_checked: true})
    expect(checkPackageReceipts(pkg, undefined)).to.deep.include({count: 9, signature_checked: false})
    const result = await verifyPackage(pkg, {logKey})
    expect(result.valid, result.failure?.message).to.equal(true)
    expect(result.receipts).to.deep.include({count: 9, signature_checked: true})
    expect(checkPackageReceipts({...pkg, receipts: undefined}, logKey)).to.equal(null)
  })

  const failures: Array<[string, (p: EvidencePackage) => void, string | undefined, RegExp]> = [
    ['another log key', () => {}, 'other', /kid .* is not the given key/],
    [
      'a receipt that is not base64',
      (p) => (p.receipts![p.events[0]!.id] = 'not base64!'),
      undefined,
      /no receipt in base64/,
    ],
    [
      'a receipt too many',
      (p) => (p.receipts!.extra = p.receipts![p.events[0]!.id]!),
      undefined,
      /10 receipts for 9 events/,
    ],
    ['receipts that are not an object', (p) => (p.receipts = [] as never), undefined, /must be an object/],
    [
      'an event whose receipt is another event’s',
      (p) => (p.receipts![p.events[1]!.id] = p.receipts![p.events[2]!.id]!),
      undefined,
      /the receipt of event .* is for leaf 2 of 9, not leaf 1/,
    ],
    [
      'a package tree that is not the receipts’ tree',
      (p) => (p.merkle = {...p.merkle, root: 'ab'.repeat(32)}),
      undefined,
      /leads to another root than the package's/,
    ],
  ]
  for (const [what, change, key, message] of failures) {
    it(`fails for ${what}`, () => {
      const copy = structuredClone(pkg)
      change(copy)
      let error: unknown
      try {
        checkPackageReceipts(copy, key === 'other' ? otherKey : key)
      } catch (thrown) {
        error = thrown
      }
      expect(error).to.be.instanceOf(EvidenceError)
      expect((error as EvidenceError).code).to.equal('receipt')
      expect((error as Error).message).to.match(message)
    })
  }
})
