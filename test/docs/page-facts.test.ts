/**
 * Facts of the docs that a reader acts on and that drift from what they describe: a block marked
 * `sh` must be POSIX shell (readers paste it into `sh`, dash on Debian), a count in prose must be
 * the length of the list it counts, and the Python receipt check must say how to install what it
 * imports on any Python.
 */
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {expect} from 'chai'
import {ROOT} from '../support/cli.js'
import {allShellBlocks} from './recipes.js'

const page = (name: string) => readFileSync(path.join(ROOT, name), 'utf8')

/** The body of each block fenced with `language` in `markdown`. */
function fenced(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!)
}

const NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven']

describe('facts of the docs', () => {
  it('every block marked sh parses as POSIX shell (dash -n); bash-only ones are marked bash', function () {
    if (spawnSync('dash', ['-c', 'true']).error) this.skip()
    // The recipes' fence language, as docs/recipes.md reads it: only `sh` promises POSIX.
    const sh = allShellBlocks(ROOT).filter((block) => /^```sh\b/.test(page(block.page).split('\n')[block.line - 1]!))
    expect(sh.length).to.be.greaterThan(10)
    const failing = sh.flatMap((block) => {
      const parsed = spawnSync('dash', ['-n'], {input: block.code, encoding: 'utf8'})
      return parsed.status === 0 ? [] : [`${block.page}:${block.line}: ${parsed.stderr.trim()}`]
    })
    expect(failing).to.deep.equal([])
  })

  it('docs/policy.md counts the rule types its table lists', () => {
    const policy = page('docs/policy.md')
    const [, word] = /one of the (\w+) types below/.exec(policy)!
    const table = policy.slice(policy.indexOf('| `type` | parameters |'))
    const rows = table.split('\n\n')[0]!.split('\n').slice(2)
    expect(rows.length).to.be.greaterThan(5)
    expect(word).to.equal(NUMBERS[rows.length])
  })

  it("docs/verification.md's receipt check names a pip line and Debian packages for what it imports", function () {
    const listed = spawnSync('python3', ['-c', 'import sys; print("\\n".join(sys.stdlib_module_names))'], {
      encoding: 'utf8',
    })
    if (listed.status !== 0) this.skip()
    const stdlib = new Set(listed.stdout.split('\n'))
    const verification = page('docs/verification.md')
    const [script] = fenced(verification, 'python').filter((code) => code.includes('verify_receipt.py'))
    const imported = [...script!.matchAll(/^(?:import|from) (\w+)/gm)].map((m) => m[1]!)
    const thirdParty = [...new Set(imported.filter((name) => !stdlib.has(name)))]
    expect(thirdParty).to.include('cbor2')
    const pip = /`pip install ([^`]+)`/.exec(verification)
    const apt = /`apt install ([^`]+)`/.exec(verification)
    for (const name of thirdParty) {
      expect(pip?.[1]!.split(' ')).to.include(name)
      expect(apt?.[1]!.split(' ')).to.include(`python3-${name}`)
    }
  })
})
