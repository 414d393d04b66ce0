/**
 * `audit-trail agent-keys` and signed ingest on the real CLI (docs/signatures.md): a key generated
 * into a file only its owner reads, registered, used by `ingest --sign-with`, revoked; the store
 * and a package of it verify, and an unsigned event of the agent is refused (exit 2).
 */
import {expect} from 'chai'
import {readFile, stat, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import {ROOT, runCli} from '../support/cli.js'
import {useTempDir} from '../support/hooks.js'

const line = (name: string, agent = 'bot') =>
  JSON.stringify({agent_id: agent, action_type: 'TOOL_CALL', action_name: name})

describe('audit-trail agent-keys and ingest --sign-with', function () {
  this.timeout(120_000)
  const dir = useTempDir()
  const data = path.join(dir, 'data')

  const cli = (...args: string[]) => runCli([...args, '--data-dir', data])

  it('generate, add, sign, revoke: each step as the log records it, and everything verifies', async () => {
    const keyFile = path.join(dir, 'bot.jwk')
    const generated = await runCli(['agent-keys', 'generate', keyFile, '--json'])
    expect(generated.code, generated.stderr).to.equal(0)
    const {kid, public_jwk} = JSON.parse(generated.stdout)
    expect((await stat(keyFile)).mode & 0o777).to.equal(0o600)
    const privateJwk = JSON.parse(await readFile(keyFile, 'utf8'))
    expect(privateJwk).to.include({kty: 'OKP', crv: 'Ed25519', x: public_jwk.x})
    expect(privateJwk.d).to.match(/^[A-Za-z0-9_-]{43}$/)
    const again = await runCli(['agent-keys', 'generate', keyFile])
    expect(again.code).to.equal(2)
    expect(again.stderr).to.match(/exists/)

    const added = await cli('agent-keys', 'add', 'bot', keyFile)
    expect(added.code, added.stderr).to.equal(0)
    expect(added.stdout).to.contain(`key ${kid} of agent bot registered at index 0`)

    const events = path.join(dir, 'events.ndjson')
    await writeFile(events, [line('one'), line('two')].join('\n'))
    const signed = await cli('ingest', events, '--sign-with', keyFile)
    expect(signed.code, signed.stderr).to.equal(0)
    expect(signed.stdout).to.contain('2 accepted, 0 rejected')

    const unsigned = await cli('ingest', events)
    expect(unsigned.code).to.equal(2)
    expect(unsigned.stdout).to.match(/line 1: missing signature: agent bot has a key registered/)

    const revoked = await cli('agent-keys', 'revoke', 'bot', kid)
    expect(revoked.code, revoked.stderr).to.equal(0)
    expect(revoked.stdout).to.contain('revoked at index 3')
    const late = await cli('ingest', events, '--sign-with', keyFile)
    expect(late.code).to.equal(2)
    expect(late.stdout).to.match(/revoked key/)

    const list = await cli('agent-keys', 'list', 'bot', '--json')
    expect(JSON.parse(list.stdout)).to.deep.equal([
      {
        ...JSON.parse(list.stdout)[0],
        agent_id: 'bot',
        kid,
        jwk: public_jwk,
        registered_index: 0,
        revoked_index: 3,
      },
    ])

    expect((await cli('verify')).code).to.equal(0)
    const packageFile = path.join(dir, 'all.atrail.json')
    expect((await cli('export', '-o', packageFile)).code).to.equal(0)
    const offline = await runCli(['verify', '--package', packageFile])
    expect(offline.code, offline.stdout + offline.stderr).to.equal(0)
    expect(offline.stdout).to.contain('signatures: 2 events signed by a key its agent had at that point of the log')

    // One signature swapped for the other event's: the package no longer verifies, and says where.
    const pkg = JSON.parse(await readFile(packageFile, 'utf8'))
    const [first, second] = pkg.events.filter((event: {agent_id: string}) => event.agent_id === 'bot')
    ;[first.signature, second.signature] = [second.signature, first.signature]
    await writeFile(packageFile, JSON.stringify(pkg))
    const tampered = await runCli(['verify', '--package', packageFile])
    expect(tampered.code).to.equal(1)
    expect(tampered.stdout).to.match(/INVALID: event .* (does not match its hash|bad signature)/)
  })

  it("the package's entry (package.json main, built) exports signEvent", async () => {
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'))
    const entry = await import(pathToFileURL(path.join(ROOT, manifest.main)).href)
    expect(entry.signEvent).to.be.a('function')
    const keyFile = path.join(dir, 'bot.jwk')
    expect((await runCli(['agent-keys', 'generate', keyFile])).code).to.equal(0)
    const signed = entry.signEvent(JSON.parse(line('x')), JSON.parse(await readFile(keyFile, 'utf8')))
    expect(signed.signature).to.match(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]{86}$/)
  })

  it('add refuses a file that is no key (exit 2), and sends only the public part of a private one', async () => {
    const bad = path.join(dir, 'bad.jwk')
    await writeFile(bad, JSON.stringify({kty: 'RSA', n: 'AQAB', e: 'AQAB'}))
    const refused = await cli('agent-keys', 'add', 'bot', bad)
    expect(refused.code).to.equal(2)
    expect(refused.stderr).to.match(/the JWK in .*bad.jwk must be an Ed25519 key/)
    const keyFile = path.join(dir, 'p256.jwk')
    expect((await runCli(['agent-keys', 'generate', keyFile, '--curve', 'P-256'])).code).to.equal(0)
    const added = await cli('agent-keys', 'add', 'bot', keyFile, '--json')
    expect(added.code, added.stderr).to.equal(0)
    expect(JSON.parse(added.stdout).event.metadata.jwk).to.have.all.keys('kty', 'crv', 'x', 'y')
  })

  it('policy check: signed_events flags the agent events that carry no valid signature (exit 1)', async () => {
    const keyFile = path.join(dir, 'bot.jwk')
    await runCli(['agent-keys', 'generate', keyFile])
    const events = path.join(dir, 'events.ndjson')
    await writeFile(events, line('before any key'))
    expect((await cli('ingest', events)).code).to.equal(0)
    expect((await cli('agent-keys', 'add', 'bot', keyFile)).code).to.equal(0)
    await writeFile(events, line('signed'))
    expect((await cli('ingest', events, '--sign-with', keyFile)).code).to.equal(0)
    const policy = path.join(dir, 'policy.yaml')
    await writeFile(policy, 'policies:\n  - name: agents sign\n    type: signed_events\n    agent_id: "b*"\n')
    const checked = await cli('policy', 'check', '--policy', policy, '--format', 'json')
    expect(checked.code).to.equal(1)
    const report = JSON.parse(checked.stdout)
    expect(report.results[0]).to.include({passed: false, violation_count: 1})
    expect(report.results[0].violations[0]).to.include({agent_id: 'bot', sequence: 1})
  })
})
