import {expect} from 'chai'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {runCli, startServe} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'

describe('a CLI user without the right API key (bin/run.js against serve --api-keys)', function () {
  this.timeout(60_000)
  const key = 'cli-hint-key-0123456789'
  let dir: string
  let server: Awaited<ReturnType<typeof startServe>>
  before(async () => {
    dir = await tempDir()
    await writeFile(path.join(dir, 'keys'), `${key}\n`)
    server = await startServe(['--data-dir', path.join(dir, 'data'), '--api-keys', path.join(dir, 'keys')])
  })
  after(async () => {
    await server.stop()
    await removeDir(dir)
  })

  it('is told about --api-key and AUDIT_TRAIL_API_KEY, not about a header', async () => {
    const missing = await runCli(['stats', '--server', server.url], {env: {AUDIT_TRAIL_API_KEY: ''}})
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.equal(
      `Error: the server at ${server.url} needs an API key: ` +
        'give it with --api-key KEY or the environment variable AUDIT_TRAIL_API_KEY\n',
    )
    for (const given of [['--api-key', 'not-the-right-key-0000'], []]) {
      const env = given.length === 0 ? {AUDIT_TRAIL_API_KEY: 'not-the-right-key-0000'} : undefined
      const wrong = await runCli(['stats', '--server', server.url, ...given], {env})
      expect(wrong.code).to.equal(2)
      expect(wrong.stderr).to.match(/refused the API key given with --api-key or AUDIT_TRAIL_API_KEY/)
      expect(wrong.stderr.trim().split('\n')).to.have.length(1)
    }
    expect((await runCli(['stats', '--server', server.url, '--api-key', key])).code).to.equal(0)
  })

  it('while an HTTP client still reads which header to send', async () => {
    const res = await fetch(`${server.url}/v1/stats`)
    expect(res.status).to.equal(401)
    const {error} = (await res.json()) as {error: {message: string}}
    expect(error.message).to.contain('Authorization: Bearer')
  })
})
