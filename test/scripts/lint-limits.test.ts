/**
 * `npm run lint` refuses what issue 42 keeps out of src/ (docs/design.md, Layout): a function of more
 * than 60 lines, a file of more than 400, and an import circle, type-only imports included. Each is
 * run through the repository's own configuration, at the limit and one past it.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {fileURLToPath} from 'node:url'
import {ESLint} from 'eslint'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** A function of `lines` lines, its first and last included, none blank. */
function functionOf(lines: number): string {
  const body = ['  let n = 0', ...Array.from({length: lines - 4}, () => '  n += 1'), '  return n']
  return ['export function counted(): number {', ...body, '}', ''].join('\n')
}

/** A file of `lines` lines of code, none blank. */
function fileOf(lines: number): string {
  return Array.from({length: lines}, (_, i) => `export const value${i} = ${i}\n`).join('')
}

/** The rules that fail `text` as a file of src/, with the repository's eslint.config.js. */
async function eslintRules(text: string): Promise<string[]> {
  const eslint = new ESLint({cwd: ROOT})
  const [result] = await eslint.lintText(text, {filePath: path.join(ROOT, 'src', 'lint-fixture.ts')})
  return result!.messages.map((message) => message.ruleId ?? message.message)
}

describe('npm run lint: the limits of src/', function () {
  this.timeout(60_000)

  it('refuses a function of 61 lines and takes one of 60', async () => {
    expect(await eslintRules(functionOf(61))).to.deep.equal(['max-lines-per-function'])
    expect(await eslintRules(functionOf(60))).to.deep.equal([])
  })

  it('does not count blank lines and comments in a function', async () => {
    const withGaps = functionOf(60).replace('  return n', '\n  // a comment\n\n  return n')
    expect(await eslintRules(withGaps)).to.deep.equal([])
  })

  it('refuses a file of 401 lines and takes one of 400', async () => {
    expect(await eslintRules(fileOf(401))).to.deep.equal(['max-lines'])
    expect(await eslintRules(fileOf(400))).to.deep.equal([])
  })

  describe('import circles (dependency-cruiser)', () => {
    let dir: string
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lint-circle-'))
      fs.mkdirSync(path.join(dir, 'src'))
      fs.copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(dir, 'tsconfig.json'))
    })
    afterEach(() => fs.rmSync(dir, {recursive: true, force: true}))

    /** `depcruise src` with the repository's configuration, in a project holding `files`. */
    function cruise(files: Record<string, string>): {status: number | null; output: string} {
      for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, 'src', name), text)
      const bin = path.join(ROOT, 'node_modules', '.bin', 'depcruise')
      const config = path.join(ROOT, '.dependency-cruiser.cjs')
      const run = spawnSync(bin, ['src', '--config', config], {cwd: dir, encoding: 'utf8'})
      return {status: run.status, output: run.stdout + run.stderr}
    }

    it('refuses a circle closed by a type-only import', () => {
      const {status, output} = cruise({
        'a.ts': "import {b} from './b.js'\nexport interface A {n: number}\nexport const a = b + 1\n",
        'b.ts': "import type {A} from './a.js'\nexport const b = 1\nexport type B = A\n",
      })
      expect(status, output).to.not.equal(0)
      expect(output).to.contain('no-circular')
    })

    it('takes the same modules once the shared type has a module of its own', () => {
      const {status, output} = cruise({
        'a.ts': "import {b} from './b.js'\nexport const a = b + 1\n",
        'b.ts': "import type {A} from './types.js'\nexport const b = 1\nexport type B = A\n",
        'types.ts': 'export interface A {n: number}\n',
      })
      expect(status, output).to.equal(0)
    })
  })
})
