/**
 * Runs shell recipes as docs/recipes.md promises: starts `serve` at http://127.0.0.1:8080 on a
 * prepared data directory, has it make an evidence package (events, a timestamp, a signed
 * checkpoint, an export), then runs each recipe with bash in its page's working directory.
 * Started by recipes.test.ts, inside a network namespace of its own where it can have the port.
 *
 * Usage: node --import tsx test/docs/run-recipes.ts <config.json> <results.json>
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {chmod, copyFile, mkdir, readFile, symlink, writeFile} from 'node:fs/promises'
import path from 'node:path'

export interface RunnerConfig {
  /** The repository (its bin/run.js, dist/ and examples/). */
  root: string
  /** An empty directory for the pages' working directories. */
  work: string
  /** The data directory for `serve` (may hold a log key already). */
  dataDir: string
  /** In order; `page` names the working directory a recipe runs in. */
  recipes: Array<{id: string; page: string; code: string}>
}

export interface RecipeResult {
  id: string
  status: number | null
  output: string
}

export interface RunnerOutput {
  pkg: string
  vkey: string
  results: RecipeResult[]
}

const URL_OF_SERVICE = 'http://127.0.0.1:8080'
const RECIPE_TIMEOUT_MS = 120_000

/** The environment without AUDIT_TRAIL_* settings of whoever runs the tests. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AUDIT_TRAIL_')))
}

function run(
  command: string,
  args: string[],
  options: {cwd: string; env?: NodeJS.ProcessEnv},
): Promise<{status: number | null; output: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), RECIPE_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({status, output})
    })
  })
}

async function cli(root: string, ...args: string[]): Promise<void> {
  const result = await run(process.execPath, [path.join(root, 'bin', 'run.js'), ...args], {cwd: root})
  if (result.status !== 0) throw new Error(`audit-trail ${args.join(' ')} exited ${result.status}: ${result.output}`)
}

function startServe(config: RunnerConfig): Promise<ChildProcess> {
  const args = ['serve', '--data-dir', config.dataDir, '--host', '127.0.0.1', '--port', '8080']
  args.push('--origin', 'audit.example.com/log', '--otlp')
  const child = spawn(process.execPath, [path.join(config.root, 'bin', 'run.js'), ...args], {
    cwd: config.work,
    env: {...cleanEnv(), NO_COLOR: '1'},
  })
  let output = ''
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      output += d
      if (output.includes('listening on')) resolve(child)
    })
    child.stderr!.on('data', (d) => (output += d))
    child.on('exit', (code) => reject(new Error(`serve exited with ${code} before listening: ${output}`)))
  })
}

async function getJson(pathAndQuery: string): Promise<any> {
  const response = await fetch(`${URL_OF_SERVICE}${pathAndQuery}`)
  if (!response.ok) throw new Error(`GET ${pathAndQuery}: ${response.status} ${await response.text()}`)
  return response.json()
}

/** Events, a timestamp and a checkpoint over all of them, then the package, as a user makes one. */
async function makePackage(config: RunnerConfig, dir: string): Promise<{file: string; vkey: string}> {
  await cli(config.root, 'ingest', 'examples/events.ndjson', '--server', URL_OF_SERVICE)
  await cli(config.root, 'timestamp', '--server', URL_OF_SERVICE)
  const {tree_size: size} = await getJson('/v1/merkle/root')
  // The service signs a checkpoint at most once a second once the tree grew.
  for (let tries = 0; ; tries++) {
    const note = await (await fetch(`${URL_OF_SERVICE}/tlog/checkpoint`)).text()
    if (note.split('\n')[1] === String(size)) break
    if (tries > 100) throw new Error(`no checkpoint at tree size ${size}: ${note}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const exported = await fetch(`${URL_OF_SERVICE}/v1/export`)
  const file = /filename="([^"]+)"/.exec(exported.headers.get('content-disposition') ?? '')![1]!
  await writeFile(path.join(dir, file), Buffer.from(await exported.arrayBuffer()))
  const ca = await fetch(`${URL_OF_SERVICE}/v1/timestamps/ca`)
  await writeFile(path.join(dir, 'ca.pem'), await ca.text())
  const {verifier_key: vkey} = await getJson('/v1/log/key')
  return {file, vkey}
}

/** A page's working directory: the package, ca.pem, and the checkout's bin/ and examples/. */
async function pageDirectory(config: RunnerConfig, fixture: string, pkg: string, page: string): Promise<string> {
  const dir = path.join(config.work, 'pages', page.replace(/[^A-Za-z0-9.-]/g, '_'))
  await mkdir(dir, {recursive: true})
  for (const name of [pkg, 'ca.pem']) await copyFile(path.join(fixture, name), path.join(dir, name))
  for (const name of ['bin', 'examples']) await symlink(path.join(config.root, name), path.join(dir, name))
  return dir
}

/** `audit-trail` on the PATH: the checkout's CLI, as `npm install -g` would put it there. */
async function cliOnPath(config: RunnerConfig): Promise<string> {
  const dir = path.join(config.work, 'path')
  await mkdir(dir, {recursive: true})
  const script = path.join(dir, 'audit-trail')
  await writeFile(script, `#!/bin/sh\nexec "${process.execPath}" "${path.join(config.root, 'bin', 'run.js')}" "$@"\n`)
  await chmod(script, 0o755)
  return dir
}

async function main(configFile: string, resultsFile: string): Promise<void> {
  const config = JSON.parse(await readFile(configFile, 'utf8')) as RunnerConfig
  await mkdir(config.work, {recursive: true})
  const serve = await startServe(config)
  try {
    const fixture = path.join(config.work, 'fixture')
    await mkdir(fixture, {recursive: true})
    const {file: pkg, vkey} = await makePackage(config, fixture)
    const env = {...cleanEnv(), PATH: `${await cliOnPath(config)}:${process.env.PATH}`, PKG: pkg, VKEY: vkey}
    const dirs = new Map<string, string>()
    const results: RecipeResult[] = []
    for (const recipe of config.recipes) {
      if (!dirs.has(recipe.page)) dirs.set(recipe.page, await pageDirectory(config, fixture, pkg, recipe.page))
      const cwd = dirs.get(recipe.page)!
      const {status, output} = await run('bash', ['-euo', 'pipefail', '-c', recipe.code], {cwd, env})
      results.push({id: recipe.id, status, output})
    }
    await writeFile(resultsFile, JSON.stringify({pkg, vkey, results} satisfies RunnerOutput))
  } finally {
    serve.kill('SIGTERM')
  }
}

await main(process.argv[2]!, process.argv[3]!)
