import {expect} from 'chai'
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {mkdir, writeFile} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {BIN, ROOT, runCli} from '../support/cli.js'
import {useTempDir} from '../support/hooks.js'

interface Started {
  child: ChildProcess
  namespace: boolean
  /** The URL once it listens, or its exit code once it exited first. */
  outcome: Promise<{url: string} | {code: number}>
  output: () => string
  exited: Promise<number>
}

/** Starts `serve` on a free loopback port, optionally as PID 1 of a new PID namespace (a container). */
function serve(dataDir: string, options: {namespace?: boolean} = {}): Started {
  const argv = [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir]
  // --kill-child: the server gets SIGTERM when unshare ends, as a container's PID 1 does on `stop`.
  const spawnOptions = {cwd: ROOT, env: {...process.env, NO_COLOR: '1'}}
  const child = options.namespace
    ? spawn(
        'unshare',
        ['--pid', '--fork', '--mount-proc', '--kill-child=SIGTERM', process.execPath, ...argv],
        spawnOptions,
      )
    : spawn(process.execPath, argv, spawnOptions)
  let out = ''
  const exited = new Promise<number>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1)))
  })
  const outcome = new Promise<{url: string} | {code: number}>((resolve) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match) resolve({url: match[1]!})
    })
    child.stderr!.on('data', (chunk) => (out += chunk))
    void exited.then((code) => resolve({code}))
  })
  return {child, namespace: options.namespace ?? false, outcome, output: () => out, exited}
}

/** SIGTERM to the server; under unshare to its child (unshare itself waits and passes nothing on). */
async function stop(started: Started): Promise<void> {
  const pid = started.child.pid!
  let children: number[] = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number)
  } catch {
    // Exited already.
  }
  if (started.namespace && children.length > 0) for (const child of children) process.kill(child, 'SIGTERM')
  else started.child.kill('SIGTERM')
  await started.exited
}

/** Why `unshare --pid` cannot run here, or undefined when it can. */
function unshareUnavailable(): string | undefined {
  const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], {encoding: 'utf8'})
  if (probe.error) return `unshare cannot be run: ${probe.error.message}`
  if (probe.status !== 0) return `unshare --pid is not permitted here: ${probe.stderr.trim()}`
  return undefined
}

describe('serve: one owner of a data directory', function () {
  this.timeout(120_000)
  const dir = useTempDir()

  it('refuses a second serve in another PID namespace (a container on the same volume) with exit 3', async function () {
    const reason = unshareUnavailable()
    if (reason !== undefined) {
      console.log(`      skipped: ${reason}`)
      this.skip()
    }
    const dataDir = path.join(dir, 'data')
    const first = serve(dataDir, {namespace: true})
    try {
      const up = await first.outcome
      expect(up, first.output()).to.have.property('url')
      const lockFile = path.join(dataDir, 'store.lock')
      for (const namespace of [true, false]) {
        const second = serve(dataDir, {namespace})
        const outcome = await second.outcome
        if ('url' in outcome) await stop(second)
        expect(outcome, second.output()).to.deep.equal({code: 3})
        // The first server runs in its own namespace as pid 1 (or 2 under unshare's init).
        expect(second.output()).to.match(
          new RegExp(
            `^Error: data directory ${dataDir} is in use by process \\d+ ` +
              `on host ${os.hostname()}, in another host or container that cannot be checked from here: stop it, ` +
              'or talk to it with --server URL rather than serving it twice \\(several serve processes share one ' +
              'log on PostgreSQL: --database-url, docs/postgres.md\\), or if that host or container is gone for ' +
              `good, make sure nothing else uses the directory and remove ${lockFile}\\n$`,
          ),
        )
      }
      const stats = await runCli(['stats', '--json', '--server', (up as {url: string}).url])
      expect(stats.code, stats.stderr).to.equal(0)
      expect(JSON.parse(stats.stdout).total_events).to.equal(0)
    } finally {
      await stop(first)
    }
  })

  it('brings up exactly one of two serves started at once on a stale lock', async () => {
    const dataDir = path.join(dir, 'data')
    for (const stale of ['999999999\n', '']) {
      await mkdir(dataDir, {recursive: true})
      await writeFile(path.join(dataDir, 'store.lock'), stale)
      const both = [serve(dataDir), serve(dataDir)]
      try {
        const outcomes = await Promise.all(both.map((s) => s.outcome))
        expect(
          outcomes.filter((o) => 'url' in o),
          both.map((s) => s.output()).join('\n'),
        ).to.have.length(1)
        expect(outcomes.filter((o) => 'code' in o && o.code === 3)).to.have.length(1)
      } finally {
        await Promise.all(both.map(stop))
      }
    }
  })
})
