/**
 * `audit-trail erase`, `export --redact` and `verify --disclosure` on the real CLI (docs/erasure.md):
 * what they print, the exit codes of README.md, and that a refusal erases nothing.
 */
import {spawnSync} from 'node:child_process'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {BIN, ROOT, runCli, startServe} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'
import {newMarker} from '../support/markers.js'
import {forEachStore, storeFlags} from '../support/stores.js'

/** Events of two customers; the marker is in c-1's payload. */
function events(marker: string): string {
  return [
    {agent_id: 'bot', action_type: 'LLM_CALL', action_name: 'chat', labels: {customer: 'c-1'}, input: {q: marker}},
    {agent_id: 'bot', action_type: 'TOOL_CALL', action_name: 'crm', labels: {customer: 'c-1'}, output: [marker]},
    {agent_id: 'bot', action_type: 'TOOL_CALL', action_name: 'crm', labels: {customer: 'c-2'}, input: {q: 'kept'}},
  ]
    .map((event) => JSON.stringify(event))
    .join('\n')
}

/** Runs the CLI on a pseudo-terminal (util-linux `script`), answering the prompt with `answer`. */
function onTerminal(args: string[], answer: string): {code: number; output: string} {
  const command = [process.execPath, BIN, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ')
  const run = spawnSync('script', ['-qec', command, '/dev/null'], {
    cwd: ROOT,
    input: `${answer}\n`,
    env: {...process.env, NO_COLOR: '1'},
  })
  return {code: run.status ?? -1, output: run.stdout.toString()}
}

describe('audit-trail erase', function () {
  this.timeout(120_000)
  forEachStore((store) => {
    const flags = storeFlags(store)
    const dir = useTempDir()
    const dataDir = path.join(dir, 'data')

    const cli = (args: string[], input?: string) => runCli([...args, ...flags(dataDir)], {input})

    it('erases by filter with --yes, says how many it touches, and --json answers as the API', async () => {
      const marker = newMarker()
      expect((await cli(['ingest', '-'], events(marker))).code).to.equal(0)
      const erased = await cli(['erase', '--label', 'customer=c-1', '--reason', 'Art. 17', '--yes'])
      expect(erased.code, erased.stderr).to.equal(0)
      expect(erased.stderr).to.include('This erases input, output, metadata, error of 2 matching events')
      expect(erased.stdout).to.match(/^erased 2 members of 2 events: erasure [0-9a-f-]{36} \(index 3\)$/m)
      expect((await cli(['events', 'list', '--json'])).stdout).to.not.include(marker)
      const again = await cli(['erase', '--label', 'customer=c-1', '--reason', 'Art. 17', '--yes', '--json'])
      expect(again.code).to.equal(0)
      const answer = JSON.parse(again.stdout)
      expect(answer).to.deep.include({erasure: null, erased_events: 0, erased_members: 0})
      expect(answer.skipped.map((s: {reason: string}) => s.reason)).to.deep.equal(['already_erased', 'already_erased'])
      expect((await cli(['verify'])).code).to.equal(0)
    })

    it('refuses without --yes off a terminal, and bad input, with exit 2; nothing is erased', async () => {
      const marker = newMarker()
      await cli(['ingest', '-'], events(marker))
      const id = JSON.parse((await cli(['events', 'list', '--json'])).stdout)[0].id
      const refusals: Array<[string[], RegExp]> = [
        [['erase', '--id', id, '--reason', 'r'], /confirm with --yes/],
        [['erase', '--id', id, '--yes'], /reason/],
        [['erase', '--id', id, '--reason', 'r', '--members', 'input,prompt', '--yes'], /members\[1\]/],
        [['erase', '--reason', 'r', '--yes'], /--id ID/],
        [['erase', '--id', id, '--agent', 'bot', '--reason', 'r', '--yes'], /not both/],
        [['erase', '--id', 'nope', '--reason', 'r', '--yes'], /ids\[0\]/],
      ]
      for (const [args, message] of refusals) {
        const result = await cli(args)
        expect(result.code, args.join(' ')).to.equal(2)
        expect(result.stderr).to.match(message)
      }
      expect((await cli(['events', 'get', id, '--json'])).stdout).to.include(marker)
    })
  })

  it('asks on a terminal: no erases nothing (exit 2), yes erases', async () => {
    const dir = await tempDir()
    try {
      const dataDir = path.join(dir, 'data')
      const marker = newMarker()
      await runCli(['ingest', '-', '--data-dir', dataDir], {input: events(marker)})
      const args = ['erase', '--agent', 'bot', '--members', 'input,output', '--reason', 'r', '--data-dir', dataDir]
      const declined = onTerminal(args, 'n')
      expect(declined.output).to.include('This erases input, output of 3 matching events, for good. Erase? [y/N]')
      expect(declined.code).to.equal(2)
      expect((await runCli(['events', 'list', '--json', '--data-dir', dataDir])).stdout).to.include(marker)
      const accepted = onTerminal(args, 'y')
      expect(accepted.code, accepted.output).to.equal(0)
      expect(accepted.output).to.include('erased 3 members of 3 events')
      expect((await runCli(['events', 'list', '--json', '--data-dir', dataDir])).stdout).to.not.include(marker)
    } finally {
      await removeDir(dir)
    }
  })

  it('--server: needs a key with the erase scope (403: exit 2), then erases', async () => {
    const dir = await tempDir()
    const keys = path.join(dir, 'keys.txt')
    await writeFile(keys, 'writer-key-0123456789abcdef read,write\neraser-key-0123456789abcdef erase\n')
    const server = await startServe(['--data-dir', path.join(dir, 'data'), '--api-keys', keys])
    try {
      const marker = newMarker()
      const write = ['--server', server.url, '--api-key', 'writer-key-0123456789abcdef']
      expect((await runCli(['ingest', '-', ...write], {input: events(marker)})).code).to.equal(0)
      const refused = await runCli(['erase', '--agent', 'bot', '--reason', 'r', '--yes', ...write])
      expect(refused.code).to.equal(2)
      expect(refused.stderr).to.match(/erase scope/)
      const erase = ['--server', server.url, '--api-key', 'eraser-key-0123456789abcdef']
      const done = await runCli(['erase', '--agent', 'bot', '--reason', 'r', '--yes', ...erase])
      expect(done.code, done.stderr).to.equal(0)
      // This key may not read: the count is not known beforehand, the answer says what was erased.
      expect(done.stderr).to.include('of the events matching the filter')
      expect(done.stdout).to.include('erased 3 members of 3 events')
      expect((await runCli(['events', 'list', '--json', ...write])).stdout).to.not.include(marker)
    } finally {
      await server.stop()
      await removeDir(dir)
    }
  })
})

describe('export --redact and verify --disclosure', function () {
  this.timeout(120_000)

  it('withholds members, verifies, and checks a disclosed value against the commitment', async () => {
    const dir = await tempDir()
    try {
      const dataDir = path.join(dir, 'data')
      const marker = newMarker()
      await runCli(['ingest', '-', '--data-dir', dataDir], {input: events(marker)})
      const file = path.join(dir, 'redacted.atrail.json')
      const exported = await runCli(['export', '--redact', 'input,output', '-o', file, '--data-dir', dataDir])
      expect(exported.code, exported.stderr).to.equal(0)
      expect(await readFile(file, 'utf8')).to.not.include(marker)
      const verified = await runCli(['verify', '--package', file])
      expect(verified.code).to.equal(0)
      expect(verified.stdout).to.include('redacted: 3 events withhold payload members')
      // What the operator hands the auditor later: one member of one event, with its salt.
      const event = JSON.parse((await runCli(['events', 'list', '--json', '--data-dir', dataDir])).stdout)[0]
      const disclosure = {event_id: event.id, member: 'input', value: event.input, salt: event.salts.input}
      const good = path.join(dir, 'good.json')
      await writeFile(good, JSON.stringify(disclosure))
      const checked = await runCli(['verify', '--package', file, '--disclosure', good])
      expect(checked.code, checked.stdout).to.equal(0)
      expect(checked.stdout).to.include(`disclosure: input of event ${event.id} matches its commitment`)
      const forged = path.join(dir, 'forged.json')
      await writeFile(forged, JSON.stringify([disclosure, {...disclosure, value: {q: 'something else'}}]))
      const refused = await runCli(['verify', '--package', file, '--disclosure', forged, '--json'])
      expect(refused.code).to.equal(1)
      expect(JSON.parse(refused.stdout).disclosures.map((d: {valid: boolean}) => d.valid)).to.deep.equal([true, false])
      const broken = path.join(dir, 'broken.json')
      await writeFile(broken, JSON.stringify({event_id: event.id, member: 'prompt', value: 1, salt: 'x'}))
      const bad = await runCli(['verify', '--package', file, '--disclosure', broken])
      expect(bad.code).to.equal(2)
      expect(bad.stderr).to.match(/member.*salt|salt.*member|member/)
      const unknown = await runCli(['export', '--redact', 'inputs', '-o', file, '--data-dir', dataDir])
      expect(unknown.code).to.equal(2)
      expect(unknown.stderr).to.match(/redact/)
    } finally {
      await removeDir(dir)
    }
  })
})
