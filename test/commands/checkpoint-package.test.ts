import {createWriteStream} from 'node:fs'
import {readFile, writeFile} from 'node:fs/promises'
import {finished} from 'node:stream/promises'
import path from 'node:path'
import {expect} from 'chai'
import {formatAddCheckpoint} from '../../src/core/witness/add-checkpoint-body.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {Witness} from '../../src/services/witness.js'
import {runCli} from '../support/cli.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

async function cosign(witness: Witness, services: AuditServices): Promise<void> {
  const latest = (await services.store.latestCheckpoint())!
  const held = witness.stateOf(await services.checkpoints.identity().then((i) => i.origin))?.size ?? 0
  const proof = held === 0 ? [] : await services.tree.read((t) => t.consistencyProof(held, latest.tree_size))
  const answer = await witness.addCheckpoint(formatAddCheckpoint({oldSize: held, proof, note: latest.note}))
  expect(answer.status).to.equal(200)
  await services.store.appendCosignatures(latest.tree_size, [answer.body])
}

describe('the checkpoint in an evidence package, checked by verify --package', function () {
  this.timeout(120_000)
  const origin = 'log.test/package'
  let dir: string
  let pkgFile: string
  let logKey: string
  let witnessKey: string
  let otherWitnessKey: string
  let pkg: Record<string, any>

  before(async () => {
    dir = await tempDir()
    const services = await openAudit({dataDir: path.join(dir, 'data'), origin})
    try {
      logKey = await services.checkpoints.verifierKey()
      const logs = new Map([[origin, [logKey]]])
      const witness = await Witness.open({dir: path.join(dir, 'w1'), name: 'witness.test/w1', logs})
      const other = await Witness.open({dir: path.join(dir, 'w2'), name: 'witness.test/w2', logs})
      witnessKey = witness.verifierKey
      otherWitnessKey = other.verifierKey
      await services.ingest.recordBatch(Array.from({length: 6}, (_, i) => makeEvent({action_name: `a-${i}`})))
      await services.checkpoints.signIfGrown()
      await cosign(witness, services)
      await services.ingest.recordBatch(Array.from({length: 3}, (_, i) => makeEvent({action_name: `b-${i}`})))
      pkgFile = path.join(dir, 'evidence.atrail.json')
      const out = createWriteStream(pkgFile)
      await services.exporter.writePackage({}, out)
      out.end()
      await finished(out)
    } finally {
      await services.close()
    }
    pkg = JSON.parse(await readFile(pkgFile, 'utf8'))
  })
  after(async () => {
    await removeDir(dir)
  })

  const variant = async (name: string, change: (p: Record<string, any>) => void) => {
    const copy = structuredClone(pkg)
    change(copy)
    const file = path.join(dir, `${name}.atrail.json`)
    await writeFile(file, JSON.stringify(copy))
    return file
  }

  it('carries the latest checkpoint at or before its tree, with its cosignatures and a consistency proof', () => {
    expect(pkg.merkle.tree_size).to.equal(9)
    expect(pkg.checkpoint.note).to.match(/^log\.test\/package\n6\n/)
    expect(pkg.checkpoint.note.match(/^\u2014 /gm)).to.have.length(2)
    expect(pkg.checkpoint.consistency_proof.length).to.be.greaterThan(0)
  })

  it('verifies with the log key and the witness key, --min-witnesses 1', async () => {
    const result = await runCli([
      'verify',
      '--package',
      pkgFile,
      '--log-key',
      logKey,
      '--witness-key',
      witnessKey,
      '--min-witnesses',
      '1',
    ])
    expect(result.stderr).to.equal('')
    expect(result.code).to.equal(0)
    expect(result.stdout).to.match(
      /checkpoint: signed by the log key of log\.test\/package at tree size 6, cosigned by witness\.test\/w1/,
    )
  })

  it("without --log-key checks the checkpoint's consistency only, and says so", async () => {
    const result = await runCli(['verify', '--package', pkgFile])
    expect(result.code).to.equal(0)
    expect(result.stdout).to.match(/its signatures were not checked \(give --log-key\)/)
  })

  it('rejects a tampered checkpoint (exit 1)', async () => {
    const file = await variant('tampered', (p) => {
      p.checkpoint.note = p.checkpoint.note.replace('\n6\n', '\n7\n')
    })
    const result = await runCli(['verify', '--package', file, '--log-key', logKey, '--json'])
    expect(result.code).to.equal(1)
    expect(JSON.parse(result.stdout).failure).to.deep.include({check: 'checkpoint'})
    // Without the key the tampered tree size no longer fits the consistency proof either.
    expect((await runCli(['verify', '--package', file])).code).to.equal(1)
  })

  it('rejects a package without a cosignature when --min-witnesses 1 asks for one', async () => {
    const file = await variant('uncosigned', (p) => {
      p.checkpoint.note = p.checkpoint.note
        .split('\n')
        .filter((line: string) => !line.startsWith('\u2014 witness.test/'))
        .join('\n')
    })
    const result = await runCli([
      'verify',
      '--package',
      file,
      '--log-key',
      logKey,
      '--witness-key',
      witnessKey,
      '--min-witnesses',
      '1',
    ])
    expect(result.code).to.equal(1)
    expect(result.stdout).to.match(/0 valid cosignatures of the given witness keys; 1 required/)
    expect(
      (await runCli(['verify', '--package', file, '--log-key', logKey, '--witness-key', witnessKey])).code,
    ).to.equal(0)
  })

  it('ignores the cosignature of a witness it was not given: --min-witnesses 1 then fails', async () => {
    const result = await runCli([
      'verify',
      '--package',
      pkgFile,
      '--log-key',
      logKey,
      '--witness-key',
      otherWitnessKey,
      '--min-witnesses',
      '1',
    ])
    expect(result.code).to.equal(1)
    expect(result.stdout).to.match(/0 valid cosignatures/)
    expect(
      (await runCli(['verify', '--package', pkgFile, '--log-key', logKey, '--witness-key', otherWitnessKey])).code,
    ).to.equal(0)
  })

  it('rejects a checkpoint signed by another log key, and a bad key is a usage error', async () => {
    const otherLog = 'log.test/package+00000000+AQ' + 'A'.repeat(42) + '='
    expect((await runCli(['verify', '--package', pkgFile, '--log-key', otherLog])).code).to.equal(2)
    // An empty key is no key to check against, not the absence of one.
    const empty = await runCli(['verify', '--package', pkgFile, '--log-key', ''])
    expect(empty.code).to.equal(2)
    expect(empty.stderr).to.match(/malformed verifier key ""/)
    const foreign = await openAudit({dataDir: path.join(dir, 'foreign'), origin})
    const foreignKey = await foreign.checkpoints.verifierKey()
    await foreign.close()
    const result = await runCli(['verify', '--package', pkgFile, '--log-key', foreignKey])
    expect(result.code).to.equal(1)
    expect(result.stdout).to.match(/not signed by the log key/)
  })
})
