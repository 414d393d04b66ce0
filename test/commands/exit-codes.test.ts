import {expect} from 'chai'
import path from 'node:path'
import {readFile, writeFile} from 'node:fs/promises'
import {runCli, ROOT} from '../support/cli.js'
import {useTempDir} from '../support/hooks.js'
import {answering, apiError, closedPort} from '../support/stub-server.js'

const SAMPLE = path.join(ROOT, 'examples', 'events.ndjson')

describe('CLI exit codes 0, 1 and 2 (one mapping for every command)', function () {
  this.timeout(120_000)
  const dir = useTempDir('suite')

  it('0 verified, 1 verification failed (a tampered package), 2 input error (a missing file, a bad flag)', async () => {
    const dataDir = path.join(dir, 'data')
    const pkg = path.join(dir, 'evidence.atrail.json')
    expect((await runCli(['ingest', SAMPLE, '--data-dir', dataDir])).code).to.equal(0)
    expect((await runCli(['export', '-o', pkg, '--data-dir', dataDir])).code).to.equal(0)
    expect((await runCli(['verify', '--data-dir', dataDir])).code).to.equal(0)
    expect((await runCli(['verify', '--package', pkg])).code).to.equal(0)
    const tampered = JSON.parse(await readFile(pkg, 'utf8'))
    tampered.events[1].action_name = 'edited'
    await writeFile(pkg, JSON.stringify(tampered))
    const failed = await runCli(['verify', '--package', pkg])
    expect(failed.code, failed.stderr).to.equal(1)
    const missing = path.join(dir, 'missing.json')
    for (const argv of [
      ['verify', '--package', missing],
      ['verify', '--data-dir', dataDir, '--sever', 'x'],
    ]) {
      const res = await runCli(argv)
      expect(res.code, `${argv.join(' ')}: ${res.stderr}`).to.equal(2)
      expect(res.stderr.trim().split('\n')).to.have.length(1)
    }
  })
})

describe('CLI exit code 3: could not check', function () {
  this.timeout(60_000)

  it('exits 3 when the server cannot be reached, stats, ingest and tail alike', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`
    for (const argv of [['stats'], ['ingest', SAMPLE], ['verify'], ['tail']]) {
      const res = await runCli([...argv, '--server', url])
      expect(res.code, `${argv.join(' ')}: ${res.stderr}`).to.equal(3)
      expect(res.stderr.trim().split('\n'), argv.join(' ')).to.have.length(1)
      const reach = /^Error: cannot reach the (server|stream) at (http|ws):\/\/127\.0\.0\.1:\d+/
      expect(res.stderr, argv.join(' ')).to.match(reach)
    }
  })

  it('exits 3 when the server fails: storage unavailable or full, TSA failing, internal error, not JSON', async () => {
    const policy = ['policy', 'check', '--policy', path.join(ROOT, 'examples', 'policy.yaml')]
    for (const [status, body, argv, said] of [
      [503, apiError('storage_unavailable', 'the journal failed'), ['ingest', SAMPLE], 'the journal failed'],
      // A code this version does not know keeps the side of its status.
      [507, apiError('storage_full', 'the data directory is full'), ['ingest', SAMPLE], 'the data directory is full'],
      [502, apiError('tsa_unavailable', 'the TSA did not answer'), ['timestamp'], 'the TSA did not answer'],
      [500, apiError('internal_error', 'internal error'), policy, 'internal error'],
      [500, 'Internal Server Error', ['stats'], 'answered 500 with a body that is not JSON'],
    ] as const) {
      const server = await answering(status, body)
      try {
        const res = await runCli([...argv, '--server', server.url])
        expect(res.code, `${status} ${argv[0]}: ${res.stderr}`).to.equal(3)
        expect(res.stderr, `${status} ${argv[0]}`).to.contain(said)
        expect(res.stderr.trim().split('\n')).to.have.length(1)
      } finally {
        await server.close()
      }
    }
  })

  it('exits 3 when the PostgreSQL server cannot be reached, and 2 for a URL that is not PostgreSQL', async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/nothing`
    const unreachable = await runCli(['stats', '--database-url', url])
    expect(unreachable.code, unreachable.stderr).to.equal(3)
    expect(unreachable.stderr.trim()).to.match(/^Error: cannot use the database .*ECONNREFUSED/)
    const wrong = await runCli(['stats', '--database-url', 'mysql://127.0.0.1/x'])
    expect(wrong.code, wrong.stderr).to.equal(2)
  })

  it('keeps exit 2 for what the user asked wrongly of a server: a refused key, an unknown event', async () => {
    for (const [status, body, argv] of [
      [401, apiError('unauthorized', 'a valid API key is required'), ['stats']],
      [404, apiError('not_found', 'no event with id x'), ['events', 'get', 'x']],
      [418, apiError('teapot', 'short and stout'), ['stats']],
    ] as const) {
      const server = await answering(status, body)
      try {
        const res = await runCli([...argv, '--server', server.url])
        expect(res.code, `${status}: ${res.stderr}`).to.equal(2)
      } finally {
        await server.close()
      }
    }
  })
})
