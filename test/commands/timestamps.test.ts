import {expect} from 'chai'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {mkdir, readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {runCli, startServe, ROOT} from '../support/cli.js'
import {createTestDatabase, postgresAvailable} from '../support/stores.js'
import {opensslCa, opensslCert, opensslReply, opensslTsaConfig, tempDir} from '../core/timestamp/openssl.js'

/**
 * `timestamp --tsa-url` on a data directory, then `timestamps verify`: the token of an external
 * TSA verifies only against that TSA's CA, given with `--tsa-ca`.
 */
describe('the CLI: timestamps from an external TSA (OpenSSL over HTTP)', function () {
  this.timeout(60_000)
  let dir: string
  let cleanup: () => Promise<void>
  let server: Server
  let url: string
  let caFile: string

  before(async () => {
    ;({dir, cleanup} = await tempDir('atrail-cli-ts-'))
    await opensslCa(dir, 'ca', 'OpenSSL Test Root')
    caFile = path.join(dir, 'ca.pem')
    await opensslCert(dir, 'ca', 'tsa', 'OpenSSL Test TSA', 'v3_tsa', 'rsa')
    await opensslTsaConfig(dir, 'tsa')
    server = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        opensslReply(dir, Buffer.concat(chunks)).then(
          (der) => response.writeHead(200, {'content-type': 'application/timestamp-reply'}).end(der),
          (error) => response.writeHead(500).end(String(error)),
        )
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsr`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await cleanup()
  })

  it('verifies the token with --tsa-ca, and says why without it', async () => {
    const dataDir = path.join(dir, 'data')
    expect(
      (await runCli(['ingest', path.join(ROOT, 'examples', 'events.ndjson'), '--data-dir', dataDir])).code,
    ).to.equal(0)
    const stamped = await runCli(['timestamp', '--data-dir', dataDir, '--tsa-url', url, '--tsa-ca', caFile, '--json'])
    expect(stamped.code, stamped.stderr).to.equal(0)
    expect(JSON.parse(stamped.stdout)).to.include({tree_size: 8, tsa: 'OpenSSL Test TSA'})

    // The data directory keeps the anchors of the TSA that stamped it: it verifies without
    // --tsa-ca, and no embedded TSA was made for it.
    const recorded = await runCli(['timestamps', 'verify', '--data-dir', dataDir, '--json'])
    expect(recorded.code, recorded.stdout + recorded.stderr).to.equal(0)
    expect(JSON.parse(recorded.stdout)).to.include({valid: true, tree_size: 8})
    expect(await readFile(path.join(dataDir, 'external-tsa-ca.pem'), 'utf8')).to.equal(await readFile(caFile, 'utf8'))
    // A CA that did not certify this TSA, given with --tsa-ca, is the only anchor then.
    await opensslCa(dir, 'other', 'Unrelated Root')
    const unrelated = await runCli([
      'timestamps',
      'verify',
      '--data-dir',
      dataDir,
      '--tsa-ca',
      path.join(dir, 'other.pem'),
      '--json',
    ])
    expect(unrelated.code).to.equal(1)
    expect(JSON.parse(unrelated.stdout).error).to.match(/trust anchor/)

    // Its evidence package carries that TSA's CA: it verifies offline, and with OpenSSL.
    const pkgFile = path.join(dir, 'stamped.atrail.json')
    expect((await runCli(['export', '--data-dir', dataDir, '-o', pkgFile])).code).to.equal(0)
    const pkg = JSON.parse(await readFile(pkgFile, 'utf8'))
    expect(pkg.tsa_certificates).to.deep.equal([await readFile(caFile, 'utf8')])
    const offline = await runCli(['verify', '--package', pkgFile])
    expect(offline.code, offline.stdout + offline.stderr).to.equal(0)
    await writeFile(path.join(dir, 'token.der'), Buffer.from(pkg.timestamp.token, 'base64'))
    await writeFile(path.join(dir, 'package-ca.pem'), pkg.tsa_certificates.join(''))
    const openssl = spawnSync(
      'openssl',
      [
        'ts',
        '-verify',
        '-digest',
        pkg.timestamp.merkle_root,
        '-token_in',
        '-in',
        'token.der',
        '-CAfile',
        'package-ca.pem',
      ],
      {cwd: dir, encoding: 'utf8'},
    )
    expect(openssl.stdout + openssl.stderr).to.contain('Verification: OK')
    expect(existsSync(path.join(dataDir, 'tsa'))).to.equal(false)

    const anchored = await runCli(['timestamps', 'verify', '--data-dir', dataDir, '--tsa-ca', caFile, '--json'])
    expect(anchored.code, anchored.stdout + anchored.stderr).to.equal(0)
    expect(JSON.parse(anchored.stdout)).to.include({
      valid: true,
      tree_size: 8,
      consistent: true,
      current_root_matches: true,
    })

    const missing = await runCli([
      'timestamps',
      'verify',
      '--data-dir',
      dataDir,
      '--tsa-ca',
      path.join(dir, 'nope.pem'),
    ])
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.match(/--tsa-ca .*nope\.pem/)

    // On a server the server's own TSA configuration decides: --tsa-ca is refused as a usage error.
    const serve = await startServe(['--data-dir', dataDir])
    try {
      const remote = await runCli(['timestamps', 'verify', '--server', serve.url, '--tsa-ca', caFile])
      expect(remote.code).to.equal(2)
      expect(remote.stderr.trim()).to.equal(
        'Error: --tsa-ca cannot be used with --server: a server checks against its own configuration',
      )
    } finally {
      await serve.stop()
    }
    // A server named only by the environment gives way to --data-dir, and never stands in the way
    // of a flag that needs the data directory or a file (nothing listens on port 9).
    const env = {AUDIT_TRAIL_SERVER: 'http://127.0.0.1:9'}
    const local = await runCli(['timestamps', 'verify', '--data-dir', dataDir, '--tsa-ca', caFile, '--json'], {env})
    expect(local.code, local.stdout + local.stderr).to.equal(0)
    const envOffline = await runCli(['verify', '--package', pkgFile], {env})
    expect(envOffline.code, envOffline.stdout + envOffline.stderr).to.equal(0)
    const both = await runCli(['verify', '--package', pkgFile, '--server', 'http://127.0.0.1:9'])
    expect(both.stderr.trim()).to.equal('Error: --package cannot be used with --server: a package is verified offline')
  })

  it("keeps the TSA's anchors in the database on PostgreSQL, and migrate carries them there", async function () {
    if (!(await postgresAvailable())) this.skip()
    const [stamped, migrated] = [await createTestDatabase(), await createTestDatabase()]
    try {
      const sample = path.join(ROOT, 'examples', 'events.ndjson')
      // Stamped through the database from one folder, verified from another: no directory holds the CA.
      const [here, elsewhere] = [path.join(dir, 'pg-here'), path.join(dir, 'pg-elsewhere')]
      await Promise.all([here, elsewhere].map((folder) => mkdir(folder)))
      const env = {AUDIT_TRAIL_DATABASE_URL: stamped.url}
      expect((await runCli(['ingest', sample], {cwd: here, env})).code).to.equal(0)
      const issued = await runCli(['timestamp', '--tsa-url', url, '--tsa-ca', caFile], {cwd: here, env})
      expect(issued.code, issued.stderr).to.equal(0)
      expect(existsSync(path.join(here, 'audit-trail-data'))).to.equal(false)
      const verified = await runCli(['timestamps', 'verify', '--json'], {cwd: elsewhere, env})
      expect(verified.code, verified.stdout + verified.stderr).to.equal(0)
      const pkgFile = path.join(elsewhere, 'pg.atrail.json')
      expect((await runCli(['export', '-o', pkgFile], {cwd: elsewhere, env})).code).to.equal(0)
      const ca = await readFile(caFile, 'utf8')
      expect(JSON.parse(await readFile(pkgFile, 'utf8')).tsa_certificates).to.deep.equal([ca])

      // A data directory stamped by the external TSA: migrate copies its recorded anchors.
      const dataDir = path.join(dir, 'stamped-dir')
      expect((await runCli(['ingest', sample, '--data-dir', dataDir])).code).to.equal(0)
      expect((await runCli(['timestamp', '--data-dir', dataDir, '--tsa-url', url, '--tsa-ca', caFile])).code).to.equal(
        0,
      )
      const moved = await runCli(['migrate', '--json', '--data-dir', dataDir, '--database-url', migrated.url])
      expect(moved.code, moved.stderr).to.equal(0)
      expect(JSON.parse(moved.stdout)).to.deep.include({
        identity: {embedded_tsa: false, external_tsa_certificates: 1, log_key: null},
        latest_timestamp: {tree_size: 8, valid: true, consistent: true},
      })
      const after = await runCli(['timestamps', 'verify', '--json', '--database-url', migrated.url], {cwd: elsewhere})
      expect(after.code, after.stdout + after.stderr).to.equal(0)
    } finally {
      await Promise.all([stamped.drop(), migrated.drop()])
    }
  })
})
