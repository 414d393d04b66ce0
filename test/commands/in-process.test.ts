/**
 * runCli runs the CLI inside the test process (test/support/cli.ts, docs/testing.md): here the same
 * commands through it and through a real `bin/run.js` process, which must agree byte for byte on
 * exit code, stdout and stderr, stdin, environment and working directory included.
 */
import {expect} from 'chai'
import {mkdir, readFile} from 'node:fs/promises'
import path from 'node:path'
import {ROOT, runCli, spawnCli, type CliOptions} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'

/** Event ids: made anew by each ingest. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const EVENTS = path.join(ROOT, 'examples', 'events.ndjson')

describe('runCli (in-process) against bin/run.js as a process', function () {
  this.timeout(120_000)
  let dir: string

  before(async () => {
    dir = await tempDir()
    await mkdir(path.join(dir, 'in'))
    await mkdir(path.join(dir, 'spawned'))
  })
  after(() => removeDir(dir))

  /** Runs argv both ways, each in a working directory of its own (named <cwd> in the output), expecting the same. */
  async function same(
    argv: string[],
    options: CliOptions = {},
  ): Promise<{code: number; stdout: string; stderr: string}> {
    const run = async (cli: typeof runCli, cwd: string) => {
      const {code, stdout, stderr} = await cli(argv, {...options, cwd})
      const plain = (text: string) => text.replaceAll(cwd, '<cwd>').replace(UUID, '<id>')
      return {code, stdout: plain(stdout), stderr: plain(stderr)}
    }
    const inProcess = await run(runCli, path.join(dir, 'in'))
    expect(inProcess, argv.join(' ')).to.deep.equal(await run(spawnCli, path.join(dir, 'spawned')))
    return inProcess
  }

  it('--version, a command help, and a mistyped command with its suggestion', async () => {
    expect((await same(['--version'])).stdout).to.match(/^audit-trail\/\d/)
    expect((await same(['events', 'list', '--help'])).stdout).to.include('USAGE')
    expect((await same(['events', 'lisst'])).stderr).to.include('did you mean "events list"?')
  })

  it('a usage error (exit 2 on stderr), and a flag from the environment', async () => {
    const missing = await same(['stats', '--data-dir', 'no-such-dir'])
    expect(missing.code).to.equal(2)
    const fromEnv = await same(['stats'], {env: {AUDIT_TRAIL_DATA_DIR: 'also-missing'}})
    expect(fromEnv.code).to.equal(2)
    expect(process.env.AUDIT_TRAIL_DATA_DIR).to.equal(undefined)
  })

  it('stdin for ingest -, then reads of the data directory made in the working directory', async () => {
    const input = await readFile(EVENTS, 'utf8')
    const ingested = await same(['ingest', '-', '--data-dir', 'data'], {input})
    expect(ingested.code).to.equal(0)
    expect(ingested.stdout).to.match(/\d+ accepted/)
    const checked = await same([
      'policy',
      'check',
      '--data-dir',
      'data',
      '--policy',
      path.join(ROOT, 'examples', 'policy.yaml'),
    ])
    expect(checked.code).to.not.equal(undefined)
    expect((await same(['agents', '--data-dir', 'data'])).code).to.equal(0)
  })

  it('leaves the test process as it found it', async () => {
    const before = {cwd: process.cwd(), exitCode: process.exitCode, argv: process.argv, noColour: process.env.NO_COLOR}
    const listeners = process.listenerCount('SIGINT')
    await runCli(['stats', '--data-dir', 'missing'], {cwd: dir, env: {AUDIT_TRAIL_PORT: '1'}})
    expect({
      cwd: process.cwd(),
      exitCode: process.exitCode,
      argv: process.argv,
      noColour: process.env.NO_COLOR,
    }).to.deep.equal(before)
    expect(process.env.AUDIT_TRAIL_PORT).to.equal(undefined)
    expect(process.listenerCount('SIGINT')).to.equal(listeners)
  })
})
