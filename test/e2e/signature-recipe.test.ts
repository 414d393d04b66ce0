/**
 * docs/verification.md 8 shows how to check agents' signatures with `jose` from a package alone:
 * the script printed there is run as it stands on packages the service exported, before and
 * after a payload member is erased, and must refuse one whose event was changed under its signature.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {generateSigningJwk, publicJwkOf, type PrivateSigningJwk} from '../../src/core/crypto.js'
import {signDetached} from '../../src/core/jws/detached.js'
import {signingInputOf} from '../../src/core/signature/index.js'
import {jwkThumbprint} from '../../src/core/jws/jwk.js'
import {signEvent} from '../../src/index.js'
import {ROOT} from '../support/cli.js'
import {removeDir, startTestApi, tempDir, type TestApi} from '../support/harness.js'

/** The ```js block of docs/verification.md that begins with `// check-signatures.mjs`. */
function recipe(): string {
  const markdown = readFileSync(path.join(ROOT, 'docs', 'verification.md'), 'utf8')
  const block = markdown.split('```js\n').find((part) => part.startsWith('// check-signatures.mjs'))
  expect(block, 'the recipe in docs/verification.md').to.be.a('string')
  return block!.slice(0, block!.indexOf('```'))
}

/** Runs the recipe with node on a package file, from the repository (where `jose` resolves). */
function runRecipe(file: string): {status: number | null; stdout: string; stderr: string} {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', recipe(), file], {cwd: ROOT})
  return {status: result.status, stdout: String(result.stdout), stderr: String(result.stderr)}
}

describe('the signature check of docs/verification.md 8, run as printed', function () {
  this.timeout(60_000)
  let api: TestApi
  let dir: string
  let pkg: any
  let revokedKey: PrivateSigningJwk
  before(async () => {
    api = await startTestApi()
    dir = await tempDir()
    const k1 = generateSigningJwk('Ed25519')
    revokedKey = k1
    const k2 = generateSigningJwk('P-256')
    const put = (key: typeof k1) => {
      const jwk = publicJwkOf(key)
      return api.request('PUT', `/v1/agents/bot/keys/${jwkThumbprint(jwk)}`, {body: jwk})
    }
    const event = (name: string) => ({agent_id: 'bot', action_type: 'TOOL_CALL', action_name: name, input: {name}})
    await api.request('POST', '/v1/events', {body: event('unsigned, before its first key')})
    await put(k1)
    await api.request('POST', '/v1/events', {body: signEvent(event('one'), k1)})
    await put(k2)
    await api.request('DELETE', `/v1/agents/bot/keys/${jwkThumbprint(publicJwkOf(k1))}`)
    await api.request('POST', '/v1/events', {body: signEvent(event('two'), k2)})
    pkg = JSON.parse((await api.request('GET', '/v1/export?agent_id=bot')).text)
  })
  after(async () => {
    await api.close()
    await removeDir(dir)
  })

  async function check(variant: object): Promise<ReturnType<typeof runRecipe>> {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.atrail.json`)
    await writeFile(file, JSON.stringify(variant))
    return runRecipe(file)
  }

  it('verifies every signature of an exported package (an Ed25519 key rotated to a P-256 one)', async () => {
    const result = await check(pkg)
    expect(result.stderr).to.equal('')
    expect(result.stdout).to.equal('2 signatures verified\n')
  })

  it('still verifies once a signed event has its input erased: the signature covers the commitment', async () => {
    const events = pkg.events.map((event: any) => {
      if (event.signature === undefined) return event
      const {input: _input, salts: _salts, ...rest} = event
      return {...rest, erased: {input: '01a2229e-3cbe-7532-a9d6-8de718a84333'}}
    })
    expect((await check({...pkg, events})).stdout).to.equal('2 signatures verified\n')
  })

  it('refuses an event changed under its signature', async () => {
    const events = pkg.events.map((event: any) =>
      event.signature === undefined ? event : {...event, action_name: 'wire.transfer'},
    )
    const result = await check({...pkg, events})
    expect(result.status).to.not.equal(0)
    expect(result.stderr).to.match(/signature verification failed/)
  })

  it('refuses an event signed with a key after the log revoked it', async () => {
    const events = pkg.events.map((event: any) =>
      event.action_name === 'two' ? {...event, signature: signDetached(signingInputOf(event), revokedKey)} : event,
    )
    const result = await check({...pkg, events})
    expect(result.status).to.not.equal(0)
    expect(result.stderr).to.match(/is no key of bot at index/)
  })
})
