// npm install's `prepare`: has git run the repository's hooks (.githooks/, README.md, Development) in
// a clone of this repository. Does nothing without git, outside a work tree of its own (an install as
// a dependency, a tarball) or where core.hooksPath is already set.
import {execFileSync} from 'node:child_process'
import * as path from 'node:path'
import {fileURLToPath} from 'node:url'

const git = (...args) => execFileSync('git', args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim()
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
try {
  if (path.resolve(git('-C', root, 'rev-parse', '--show-toplevel')) !== root) process.exit(0)
} catch {
  process.exit(0)
}
let current = ''
try {
  current = git('-C', root, 'config', '--get', 'core.hooksPath')
} catch {
  // Unset: git exits 1.
}
if (current === '') git('-C', root, 'config', 'core.hooksPath', '.githooks')
