import {expect} from 'chai'
import {execFileSync, spawnSync} from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** A fresh repository that runs this repository's hooks, as `npm install`'s prepare sets it up. */
function repository(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'commit-msg-'))
  const git = (...args: string[]) => execFileSync('git', args, {cwd: dir, stdio: 'pipe'})
  git('init', '-q')
  git('config', 'user.email', 'test@example.org')
  git('config', 'user.name', 'test')
  git('config', 'core.hooksPath', path.join(ROOT, '.githooks'))
  fs.writeFileSync(path.join(dir, 'file'), 'x')
  git('add', 'file')
  return dir
}

function commit(dir: string, message: string): {status: number | null; stderr: string} {
  const result = spawnSync('git', ['commit', '-q', '-F', '-'], {cwd: dir, input: message, encoding: 'utf8'})
  return {status: result.status, stderr: result.stderr}
}

describe('the commit-msg hook (.githooks)', () => {
  let dir: string
  beforeEach(() => {
    dir = repository()
  })
  afterEach(() => fs.rmSync(dir, {recursive: true, force: true}))

  it('refuses a subject of 73 characters and makes no commit', () => {
    const {status, stderr} = commit(dir, `${'a'.repeat(73)}\n\nbody`)
    expect(status).to.not.equal(0)
    expect(stderr).to.contain('73 characters, over 72')
    expect(spawnSync('git', ['rev-parse', '--verify', 'HEAD'], {cwd: dir}).status).to.not.equal(0)
  })

  it('takes a subject of 72 characters, counting characters rather than bytes', () => {
    expect(commit(dir, `${'é'.repeat(72)}\n\n${'a long body line '.repeat(20)}`).status).to.equal(0)
  })

  it('reads the subject past comment lines and blank lines, as git keeps it', () => {
    expect(commit(dir, `# a comment line that git drops ${'x'.repeat(80)}\n\nshort subject\n`).status).to.equal(0)
  })
})
