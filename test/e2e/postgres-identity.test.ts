import {readFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {splitCertificates} from '../../src/core/timestamp/index.js'
import {ROOT, runCli, startServe} from '../support/cli.js'
import {postgresPerTest} from '../support/stores.js'

type Server = Awaited<ReturnType<typeof startServe>>

const SAMPLE = path.join(ROOT, 'examples', 'events.ndjson')

/**
 * Issue 36, first reproduction: a folder with the README's `./audit-trail-data/tsa/` (another
 * log's embedded TSA) must not change what a PostgreSQL log signs with or hands out as its anchor.
 */
describe("PostgreSQL keeps the log's TSA whatever folder a command runs in", function () {
  this.timeout(180_000)
  let server: Server | undefined
  const fresh = postgresPerTest(async () => {
    await server?.stop()
    server = undefined
  })

  it('timestamps verify, an exported package, GET /v1/timestamps/ca and keys log all use the database', async () => {
    // The folder's own data directory, with an embedded TSA of its own (what the README's first steps make).
    const cwd = fresh.dir
    const local = await runCli(['ingest', SAMPLE], {cwd})
    expect(local.code, local.stderr).to.equal(0)
    expect((await runCli(['timestamp'], {cwd})).code).to.equal(0)
    const folderCa = await readFile(path.join(cwd, 'audit-trail-data', 'tsa', 'ca.pem'), 'utf8')

    const env = {AUDIT_TRAIL_DATABASE_URL: fresh.url}
    for (const argv of [['ingest', SAMPLE], ['timestamp']]) {
      const result = await runCli(argv, {cwd, env})
      expect(result.code, `${argv[0]}: ${result.stderr}`).to.equal(0)
    }
    const verified = await runCli(['timestamps', 'verify', '--json'], {cwd, env})
    expect(verified.code, verified.stdout + verified.stderr).to.equal(0)
    expect(JSON.parse(verified.stdout)).to.include({valid: true, consistent: true})

    const pkgFile = path.join(cwd, 'evidence.atrail.json')
    expect((await runCli(['export', '-o', pkgFile], {cwd, env})).code).to.equal(0)
    const checked = await runCli(['verify', '--package', pkgFile], {cwd})
    expect(checked.code, checked.stdout + checked.stderr).to.equal(0)
    const pkg = JSON.parse(await readFile(pkgFile, 'utf8'))
    expect(pkg.tsa_certificates).to.have.length(1)
    expect(pkg.tsa_certificates[0]).to.not.equal(splitCertificates([folderCa])[0])

    // A server started in the same folder hands out the database's CA, the one that signed.
    server = await startServe(['--database-url', fresh.url], {cwd})
    const served = await (await fetch(`${server.url}/v1/timestamps/ca`)).text()
    expect(splitCertificates([served])).to.deep.equal(pkg.tsa_certificates)
    const key = (await (await fetch(`${server.url}/v1/log/key`)).json()) as {verifier_key: string}
    const offline = await runCli(['keys', 'log'], {cwd, env})
    expect(offline.stdout.trim()).to.equal(key.verifier_key)
    const local2 = await runCli(['keys', 'log'], {cwd})
    expect(local2.stdout.trim(), 'the folder is another log, with a key of its own').to.not.equal(key.verifier_key)

    // stats says by what its 24 h count counts; a database server stops without a snapshot to write.
    const stats = await runCli(['stats'], {cwd, env})
    expect(stats.stdout).to.match(/^recorded in 24 h 8 \(by recorded_at: when the log received them\)$/m)
    await server.stop()
    expect(server.output()).to.contain('audit-trail: SIGTERM received, finishing requests\n')
    expect(server.output()).to.not.contain('snapshot')
    server = undefined
  })
})
