import {spawnSync} from 'node:child_process'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {openAudit} from '../../src/services/audit.js'
import {ROOT} from '../support/cli.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

/** A Python 3 with cbor2 and cryptography (Debian: python3-cbor2, python3-cryptography), if there is one. */
function pythonWithCbor(): string | undefined {
  return ['python3', '/usr/bin/python3'].find(
    (python) => spawnSync(python, ['-c', 'import cbor2, cryptography'], {stdio: 'ignore'}).status === 0,
  )
}

/**
 * The receipt steps of docs/verification.md, run as written: an implementation in another
 * language, on another CBOR decoder and another Ed25519, that knows only RFC 9052, 9162 and 9942.
 */
describe('a receipt verified by the Python of docs/verification.md', function () {
  this.timeout(60_000)
  const python = pythonWithCbor()
  let dir: string
  let script: string
  before(async function () {
    if (!python) this.skip()
    dir = await tempDir()
    const docs = await readFile(path.join(ROOT, 'docs', 'verification.md'), 'utf8')
    const block = /```python\n(# verify_receipt\.py[\s\S]*?)```/.exec(docs)
    expect(block, 'the verify_receipt.py block of docs/verification.md').to.not.equal(null)
    script = path.join(dir, 'verify_receipt.py')
    await writeFile(script, block![1]!)
  })
  after(async () => {
    if (dir) await removeDir(dir)
  })

  it('accepts our receipts and refuses them altered, for another leaf or another key', async () => {
    const services = await openAudit({dataDir: path.join(dir, 'data')})
    const other = await openAudit({dataDir: path.join(dir, 'other')})
    try {
      await services.ingest.recordBatch(Array.from({length: 11}, (_, i) => makeEvent({action_name: `n-${i}`})))
      const event = (await services.query.listEvents({})).events[6]!
      const issued = await services.receipts.forEvent(event.id)
      const file = path.join(dir, 'receipt.cose')
      await writeFile(file, issued.receipt)
      const vkey = await services.checkpoints.verifierKey()
      const run = (receipt: string, hash: string, index: number, key: string) =>
        spawnSync(python!, [script, receipt, hash, String(index), key], {encoding: 'utf8'})
      const valid = run(file, event.hash, event.index, vkey)
      expect(valid.status, valid.stderr).to.equal(0)
      expect(valid.stdout.trim()).to.equal(`valid: leaf 6 of the tree of 11 leaves, root ${issued.root}`)
      const flipped = Buffer.from(issued.receipt)
      flipped[flipped.length - 1]! ^= 0x01
      const flippedFile = path.join(dir, 'flipped.cose')
      await writeFile(flippedFile, flipped)
      const neighbour = (await services.query.listEvents({})).events[7]!
      for (const [what, result] of [
        ['a flipped signature byte', run(flippedFile, event.hash, event.index, vkey)],
        ['another event', run(file, neighbour.hash, event.index, vkey)],
        ['another index', run(file, event.hash, 7, vkey)],
        ['another log key', run(file, event.hash, event.index, await other.checkpoints.verifierKey())],
      ] as const) {
        expect(result.status, what).to.not.equal(0)
        expect(result.stderr, what).to.match(/InvalidSignature|AssertionError/)
      }
    } finally {
      await services.close()
      await other.close()
    }
  })
})
