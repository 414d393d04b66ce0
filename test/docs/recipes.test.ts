/**
 * Every shell recipe of the docs, run exactly as printed (docs/recipes.md) against a service at
 * http://127.0.0.1:8080 and a package it has just made, whose log key holds a `+` in its base64.
 * The service gets the port in a network namespace of its own (unshare), or, where namespaces are
 * not permitted (a CI container), directly when the port is free.
 */
import {spawn, spawnSync} from 'node:child_process'
import {generateKeyPairSync} from 'node:crypto'
import {existsSync} from 'node:fs'
import {mkdir, readFile, writeFile} from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import {expect} from 'chai'
import {ROOT} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {allShellBlocks, shellBlocks, type ShellBlock} from './recipes.js'
import type {RecipeResult, RunnerConfig, RunnerOutput} from './run-recipes.js'

const RUNNER = path.join(ROOT, 'test', 'docs', 'run-recipes.ts')

/** An Ed25519 log key whose verifier key's base64 holds a `+` (about half of all keys do). */
function logKeyWithPlus(): string {
  for (;;) {
    const {publicKey, privateKey} = generateKeyPairSync('ed25519')
    const raw = publicKey.export({format: 'der', type: 'spki'}).subarray(-32)
    if (
      Buffer.concat([Buffer.from([1]), raw])
        .toString('base64')
        .includes('+')
    )
      return privateKey.export({format: 'pem', type: 'pkcs8'}) as string
  }
}

/** Where the runner can have 127.0.0.1:8080: its own network namespace, this one, or nowhere (the reason). */
async function placeForService(): Promise<'namespace' | 'here' | {skip: string}> {
  const probe = spawnSync('unshare', ['--net', '--map-root-user', 'ip', 'link', 'set', 'lo', 'up'], {encoding: 'utf8'})
  if (probe.status === 0) return 'namespace'
  const free = await new Promise<boolean>((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen(8080, '127.0.0.1', () => server.close(() => resolve(true)))
  })
  if (free) return 'here'
  return {skip: `127.0.0.1:8080 is taken and no network namespace can be made (${probe.stderr.trim()})`}
}

function runRunner(place: 'namespace' | 'here', config: string, results: string): Promise<string> {
  const node = [process.execPath, '--import', 'tsx', RUNNER, config, results]
  const [command, ...args] =
    place === 'namespace'
      ? ['unshare', '--net', '--map-root-user', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...node]
      : node
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, {cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']})
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    child.on('error', reject)
    child.on('close', (status) => (status === 0 ? resolve(output) : reject(new Error(`the runner failed: ${output}`))))
  })
}

/** The recipe of docs/verification.md section 7, and it with one of the two mistakes of issue 35 put back. */
function checkpointRecipes(blocks: ShellBlock[]): Array<{id: string; code: string}> {
  const recipe = blocks.find((b) => b.page === 'docs/verification.md' && b.code.includes('.checkpoint.note'))
  expect(recipe, 'docs/verification.md has a recipe that checks the checkpoint').to.not.equal(undefined)
  const mistakes = {
    'jq -r': ['jq -j .checkpoint.note', 'jq -r .checkpoint.note'],
    '${VKEY##*+}': ['${VKEY#*+*+}', '${VKEY##*+}'],
  }
  return Object.entries(mistakes).map(([id, [fixed, mistaken]]) => {
    expect(recipe!.code, `the recipe uses ${fixed}`).to.contain(fixed)
    return {id: `mistake ${id}`, code: recipe!.code.replace(fixed!, mistaken!)}
  })
}

const title = (block: ShellBlock): string => `${block.page}:${block.line} (${block.code.split('\n')[0]!.slice(0, 60)})`

describe('the shell recipes of the docs, run as printed (docs/recipes.md)', function () {
  this.timeout(600_000)
  const blocks = allShellBlocks(ROOT)
  const recipes = blocks.filter((block) => block.noRun === undefined)
  let dir: string
  let outcome: RunnerOutput | {skip: string}
  const result = (id: string): RecipeResult => {
    if ('skip' in outcome) throw new Error(outcome.skip)
    return outcome.results.find((r) => r.id === id)!
  }

  before(async function () {
    const place = await placeForService()
    if (typeof place === 'object') {
      outcome = place
      return
    }
    if (!existsSync(path.join(ROOT, 'dist', 'commands'))) {
      const build = spawnSync('npm', ['run', 'build'], {cwd: ROOT, encoding: 'utf8'})
      if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr}`)
    }
    dir = await tempDir('atrail-recipes-')
    const dataDir = path.join(dir, 'data')
    await mkdir(path.join(dataDir, 'log'), {recursive: true})
    await writeFile(path.join(dataDir, 'log', 'log.key'), logKeyWithPlus(), {mode: 0o600})
    const config: RunnerConfig = {
      root: ROOT,
      work: path.join(dir, 'work'),
      dataDir,
      recipes: [
        ...recipes.map((block) => ({id: title(block), page: block.page, code: block.code})),
        // Each in a directory of its own, as a reader who ran only that recipe.
        ...checkpointRecipes(blocks).map(({id, code}) => ({id, page: id, code})),
      ],
    }
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(config))
    await runRunner(place, path.join(dir, 'config.json'), path.join(dir, 'results.json'))
    outcome = JSON.parse(await readFile(path.join(dir, 'results.json'), 'utf8')) as RunnerOutput
  })

  after(async () => {
    if (dir) await removeDir(dir)
  })

  beforeEach(function () {
    if (outcome !== undefined && 'skip' in outcome) {
      console.log(`      skipped: ${outcome.skip}`)
      this.skip()
    }
  })

  for (const block of recipes) {
    it(`runs ${title(block)}`, () => {
      const {status, output} = result(title(block))
      expect(status, `${block.code}\n--- output:\n${output}`).to.equal(0)
    })
  }

  it("ran on a package whose log key has a '+' in its base64, with a timestamp and a checkpoint", async () => {
    if ('skip' in outcome) return
    expect(outcome.vkey.split('+').length, outcome.vkey).to.be.greaterThan(3)
    expect(outcome.pkg).to.match(/^audit-trail-\d{8}T\d{6}Z\.atrail\.json$/)
    const pkg = JSON.parse(await readFile(path.join(dir, 'work', 'fixture', outcome.pkg), 'utf8'))
    expect(pkg.timestamp).to.include({tree_size: pkg.merkle.tree_size})
    expect(pkg.checkpoint.note).to.match(new RegExp(`^audit\\.example\\.com/log\n${pkg.merkle.tree_size}\n`))
  })

  it('fails the section 7 recipe with either mistake of issue 35 put back (jq -r, ${VKEY##*+})', () => {
    // jq -r adds a blank line after the signatures: the signed text takes them in.
    const jq = result('mistake jq -r')
    expect(jq.status, jq.output).to.not.equal(0)
    expect(jq.output).to.contain('Signature Verification Failure')
    // What follows the last '+' is a piece of the base64: no key.
    const vkey = result('mistake ${VKEY##*+}')
    expect(vkey.status, vkey.output).to.not.equal(0)
    expect(vkey.output).to.not.contain('Verified Successfully')
  })
})

describe('shell blocks of a Markdown page (docs/recipes.md)', () => {
  it('takes sh, bash and shell blocks, indented ones too, and knows the ones marked no-run', () => {
    const page = [
      '# Title',
      '```sh',
      'echo one',
      '```',
      '1. In a list:',
      '',
      '   ```bash',
      '   echo two',
      '     indented',
      '   ```',
      '<!-- no-run: serves until stopped -->',
      '```shell',
      'serve',
      '```',
      '````markdown',
      '```sh',
      'not a block of its own',
      '```',
      '````',
      '```js',
      'console.log(1)',
      '```',
      '```',
      'output',
      '```',
    ].join('\n')
    expect(shellBlocks('p.md', page)).to.deep.equal([
      {page: 'p.md', line: 2, code: 'echo one\n'},
      {page: 'p.md', line: 7, code: 'echo two\n  indented\n'},
      {page: 'p.md', line: 12, code: 'serve\n', noRun: 'serves until stopped'},
    ])
  })

  it('finds the recipes of the pages this test promises to run', () => {
    const pages = new Set(allShellBlocks(ROOT).map((block) => block.page))
    for (const page of ['README.md', 'docs/verification.md', 'docs/timestamps.md', 'docs/api.md'])
      expect(pages, page).to.include(page)
  })
})
