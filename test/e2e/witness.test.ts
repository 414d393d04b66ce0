import {expect} from 'chai'
import {cosignatureVerifier} from '../../src/core/checkpoint/index.js'
import {ed25519NoteVerifier, openNote} from '../../src/core/note/index.js'
import {runCli, startServe, startWitness} from '../support/cli.js'
import {makeEvent, removeDir} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'

describe('audit-trail keys log, witness serve and serve --witness (end to end)', function () {
  this.timeout(300_000)
  const origin = 'log.test/e2e'
  const dir = useTempDir('suite')

  it('prints the log key offline, the same each time', async () => {
    const first = await runCli(['keys', 'log', '--data-dir', dir, '--origin', origin])
    expect(first.code, first.stderr).to.equal(0)
    expect(first.stdout).to.match(/^log\.test\/e2e\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}\n$/)
    const json = JSON.parse((await runCli(['keys', 'log', '--data-dir', dir, '--origin', origin, '--json'])).stdout)
    expect(json).to.deep.equal({origin, verifier_key: first.stdout.trim()})
  })

  it('refuses --witness without a key, or with a malformed one (exit 2)', async () => {
    expect(
      (await runCli(['serve', '--data-dir', dir, '--port', '0', '--witness', 'http://127.0.0.1:9'])).code,
    ).to.equal(2)
    const bad = await runCli([
      'serve',
      '--data-dir',
      dir,
      '--port',
      '0',
      '--witness',
      'http://127.0.0.1:9',
      '--witness-key',
      'nonsense',
    ])
    expect(bad.code).to.equal(2)
    expect(bad.stderr).to.match(/--witness/)
  })

  it('a served log gets its checkpoints cosigned by a witness serve', async () => {
    const logKey = (await runCli(['keys', 'log', '--data-dir', dir, '--origin', origin])).stdout.trim()
    const witness = await startWitness([
      '--dir',
      `${dir}-witness`,
      '--name',
      'witness.test/e2e',
      '--log',
      `${origin}=${logKey}`,
    ])
    const log = await startServe([
      '--data-dir',
      dir,
      '--origin',
      origin,
      '--witness',
      witness.url,
      '--witness-key',
      witness.key,
    ])
    try {
      expect(log.output()).to.not.match(/default origin/)
      const response = await fetch(`${log.url}/v1/events`, {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify(makeEvent()),
      })
      expect(response.status).to.equal(201)
      // Signed within a second of the event, then cosigned in the background: wait for it to show.
      let note = ''
      for (let i = 0; i < 600 && !note.includes('witness.test/e2e'); i++) {
        note = await (await fetch(`${log.url}/tlog/checkpoint`)).text()
        if (!note.includes('witness.test/e2e')) await new Promise((r) => setTimeout(r, 100))
      }
      const opened = openNote(note, [ed25519NoteVerifier(logKey), cosignatureVerifier(witness.key)])
      expect(opened.verified.map((s) => s.name)).to.deep.equal([origin, 'witness.test/e2e'])
      const root = (await (await fetch(`${log.url}/v1/merkle/root`)).json()) as {merkle_root: string}
      expect(opened.text).to.equal(`${origin}\n1\n${Buffer.from(root.merkle_root, 'hex').toString('base64')}\n`)
    } finally {
      await log.stop()
      await witness.stop()
      await removeDir(`${dir}-witness`)
    }
  })
})
