import {expect} from 'chai'
import * as http from 'node:http'
import type {AddressInfo} from 'node:net'
import path from 'node:path'
import {readFile, writeFile} from 'node:fs/promises'
import {runCli, ROOT} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'

const SAMPLE = path.join(ROOT, 'examples', 'events.ndjson')

/** A server that answers every request with `status` and `body`, as a failing audit-trail would. */
async function answering(status: number, body: string): Promise<{url: string; close(): Promise<void>}> {
  const server = http.createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(status, {'content-type': 'application/json; charset=utf-8'}).end(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** A loopback port nothing listens on: one that was free a moment ago. */
async function closedPort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const error = (code: string, message: string) => JSON.stringify({error: {code, message}})

describe('CLI exit codes 0, 1 and 2 (one mapping for every command)', function () {
  this.timeout(120_000)
  let dir: string
  before(async () => {
    dir = await tempDir()
  })
  after(async () => {
    await removeDir(dir)
  })

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
      [503, error('storage_unavailable', 'the journal failed'), ['ingest', SAMPLE], 'the journal failed'],
      // A code this version does not know keeps the side of its status.
      [507, error('storage_full', 'the data directory is full'), ['ingest', SAMPLE], 'the data directory is full'],
      [502, error('tsa_unavailable', 'the TSA did not answer'), ['timestamp'], 'the TSA did not answer'],
      [500, error('internal_error', 'internal error'), policy, 'internal error'],
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
      [401, error('unauthorized', 'a valid API key is required'), ['stats']],
      [404, error('not_found', 'no event with id x'), ['events', 'get', 'x']],
      [418, error('teapot', 'short and stout'), ['stats']],
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
