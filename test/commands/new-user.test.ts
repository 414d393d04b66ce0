/**
 * What a new user trips over first, on the real CLI: `--server` typed without its scheme or with
 * the API's `/v1`, https against plain HTTP, `--json` errors, scopes checked before anything is
 * announced, input messages that say where and why, and the data directory's permissions.
 */
import {mkdir, stat, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {runCli} from '../support/cli.js'
import {makeEvent, startTestApi, type TestApi} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'

const READ_KEY = 'read-key-0123456789abcdef'
const ADMIN_KEY = 'admin-key-0123456789abcdef'
const WRITE_KEY = 'write-key-0123456789abcdef'
const KEYS = `${READ_KEY} read\n${ADMIN_KEY} admin\n${WRITE_KEY} write\n`

describe('what a new user trips over', function () {
  this.timeout(120_000)
  const dir = useTempDir()

  describe('--server mistakes', () => {
    let api: TestApi
    before(async () => {
      api = await startTestApi()
      await api.request('POST', '/v1/events', {body: makeEvent()})
    })
    after(async () => {
      await api.close()
    })

    for (const typed of ['127.0.0.1:8080', 'localhost:8080']) {
      it(`${typed} (no scheme) is an input error saying what to type`, async () => {
        const result = await runCli(['stats', '--server', typed])
        expect(result.code).to.equal(2)
        expect(result.stderr).to.equal(
          `Error: --server ${typed} is not an http:// or https:// URL: type http://${typed} (or https:// for a ` +
            `server behind TLS)\n`,
        )
      })
    }

    it('from AUDIT_TRAIL_SERVER, the message names the variable', async () => {
      const result = await runCli(['stats'], {env: {AUDIT_TRAIL_SERVER: '127.0.0.1:8080'}})
      expect(result.code).to.equal(2)
      expect(result.stderr).to.match(/^Error: AUDIT_TRAIL_SERVER 127\.0\.0\.1:8080 is not an http/)
    })

    it('a trailing /v1 (the API prefix) is accepted', async () => {
      for (const suffix of ['/v1', '/v1/']) {
        const result = await runCli(['events', 'list', '--json', '--server', `${api.url}${suffix}`])
        expect(result.code, result.stderr).to.equal(0)
        expect(JSON.parse(result.stdout)).to.have.length(1)
      }
    })

    it('https against a plain HTTP server says so and exits 2', async () => {
      const https = api.url.replace(/^http:/, 'https:')
      const result = await runCli(['stats', '--server', https])
      expect(result.code).to.equal(2)
      expect(result.stderr).to.equal(
        `Error: the server at ${https} answers plain HTTP, not TLS: type --server ${api.url}, or put it behind TLS\n`,
      )
    })

    it('with --json, an unreachable server is the error body on stdout (exit 3)', async () => {
      const closed = await startTestApi()
      const url = closed.url
      await closed.close()
      const result = await runCli(['stats', '--json', '--server', url])
      expect(result.code).to.equal(3)
      const body = JSON.parse(result.stdout)
      expect(body.error.code).to.equal('internal_error')
      expect(body.error.message).to.match(new RegExp(`^cannot reach the server at ${url}`))
      expect(result.stderr).to.equal(`Error: ${body.error.message}\n`)
    })
  })

  describe('scopes', () => {
    let api: TestApi
    let eventId: string
    before(async () => {
      api = await startTestApi({app: {apiKeys: parseKeyFile(KEYS)}})
      const posted = await api.request('POST', '/v1/events', {
        body: makeEvent({agent_id: 'bot', input: {secret: 1}}),
        headers: {authorization: `Bearer ${WRITE_KEY}`},
      })
      eventId = posted.body.id
    })
    after(async () => {
      await api.close()
    })

    it('erase --yes with a read key fails on the scope before announcing anything, and erases nothing', async () => {
      const result = await runCli(['erase', '--id', eventId, '--reason', 'test', '--yes', '--server', api.url], {
        env: {AUDIT_TRAIL_API_KEY: READ_KEY},
      })
      expect(result.code).to.equal(2)
      expect(result.stderr).not.to.include('This erases')
      expect(result.stderr).to.match(/^Error: the API key lacks the erase scope/)
      const event = await api.request('GET', `/v1/events/${eventId}`, {headers: {authorization: `Bearer ${READ_KEY}`}})
      expect(event.body.input).to.deep.equal({secret: 1})
    })

    it('an admin key lists agent keys (the CLI and GET), and still reads nothing else', async () => {
      const listed = await runCli(['agent-keys', 'list', 'bot', '--server', api.url, '--api-key', ADMIN_KEY])
      expect(listed.code, listed.stderr).to.equal(0)
      expect(listed.stdout).to.include('agent bot has no key')
      const admin = {authorization: `Bearer ${ADMIN_KEY}`}
      expect((await api.request('GET', '/v1/agents/bot/keys', {headers: admin})).status).to.equal(200)
      expect((await api.request('GET', '/v1/events', {headers: admin})).status).to.equal(403)
      const write = {authorization: `Bearer ${WRITE_KEY}`}
      const refused = await api.request('GET', '/v1/agents/bot/keys', {headers: write})
      expect(refused.status).to.equal(403)
      expect(refused.body.error.message).to.equal('the API key lacks the read or admin scope')
    })
  })

  describe('messages', () => {
    it('a bad NDJSON line gives the parser reason and the column', async () => {
      const file = path.join(dir, 'events.ndjson')
      const good = JSON.stringify(makeEvent())
      await writeFile(file, `${good}\n{"agent_id": "a",}\n${good}\n`)
      const result = await runCli(['ingest', file, '--data-dir', path.join(dir, 'data')])
      expect(result.code).to.equal(2)
      expect(result.stdout).to.match(/line 2: not valid JSON at column 18: Expected double-quoted property name\n/)
    })

    it('agent-keys add with a missing file says so in words (exit 2)', async () => {
      const missing = path.join(dir, 'nosuch.jwk')
      const result = await runCli(['agent-keys', 'add', 'bot', missing, '--data-dir', path.join(dir, 'data')])
      expect(result.code).to.equal(2)
      expect(result.stderr).to.equal(
        `Error: cannot read ${missing} (no such file): give the path of a JWK file, such as one that agent-keys ` +
          `generate writes\n`,
      )
    })

    it('verify --help shows its three forms, not a garbled line', async () => {
      const result = await runCli(['verify', '--help'])
      expect(result.code).to.equal(0)
      const usage = result.stdout
        .slice(result.stdout.indexOf('USAGE'), result.stdout.indexOf('FLAGS'))
        .replace(/\s+/g, ' ')
      expect(usage).not.to.match(/\|\s*\|/)
      expect(usage).to.include('$ audit-trail verify --receipt FILE --event FILE --log-key VKEY')
      expect(usage).to.include('$ audit-trail verify --package FILE [--tsa-ca FILE]')
    })

    it('mcp-proxy with the first word of the command lost names the -- it needs', async () => {
      const result = await runCli(['mcp-proxy', '-y', '@modelcontextprotocol/server-filesystem', dir])
      expect(result.code).to.equal(2)
      expect(result.stderr).to.match(/^Error: Nonexistent flag: -y; if it belongs to the MCP server's command/)
      expect(result.stderr).to.include('give that command after --')
    })
  })

  describe('files', () => {
    it('a new data directory is 0700 and its key files 0600', async () => {
      const data = path.join(dir, 'nested', 'data')
      await mkdir(path.dirname(data))
      const ingested = await runCli(['ingest', '-', '--data-dir', data], {input: JSON.stringify(makeEvent())})
      expect(ingested.code, ingested.stderr).to.equal(0)
      expect((await runCli(['keys', 'log', '--data-dir', data])).code).to.equal(0)
      expect((await runCli(['timestamp', '--data-dir', data])).code).to.equal(0)
      expect((await stat(data)).mode & 0o777).to.equal(0o700)
      expect((await stat(path.join(data, 'log', 'log.key'))).mode & 0o777).to.equal(0o600)
      expect((await stat(path.join(data, 'tsa', 'tsa.key'))).mode & 0o777).to.equal(0o600)
    })
  })
})
