import {expect} from 'chai'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {ROOT, runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'

const SAMPLE = path.join(ROOT, 'examples', 'events.ndjson')

describe('verify --package on a file that is no package (bin/run.js)', function () {
  this.timeout(60_000)
  let dir: string
  let text: string
  before(async () => {
    dir = await tempDir()
    const dataDir = path.join(dir, 'data')
    expect((await runCli(['ingest', SAMPLE, '--data-dir', dataDir])).code).to.equal(0)
    const file = path.join(dir, 'evidence.atrail.json')
    expect((await runCli(['export', '-o', file, '--data-dir', dataDir])).code).to.equal(0)
    text = await readFile(file, 'utf8')
  })
  after(async () => {
    await removeDir(dir)
  })

  it('calls a package with a member given twice invalid (exit 1), naming the member', async () => {
    const file = path.join(dir, 'twice.atrail.json')
    await writeFile(file, text.replace('"filters":', '"events":[],"filters":'))
    const human = await runCli(['verify', '--package', file])
    expect(human.code, human.stderr).to.equal(1)
    expect(human.stdout).to.contain('INVALID: the package has the member "events" twice')
    const json = await runCli(['verify', '--package', file, '--json'])
    expect(json.code).to.equal(1)
    const result = JSON.parse(json.stdout)
    expect(result.valid).to.equal(false)
    expect(result.failure.check).to.equal('format')
    expect(result.failure.message).to.match(/member "events" twice/)
  })

  it('names the byte, line and column where a package stops being JSON (exit 2, one sentence)', async () => {
    // Garbage between two events, past the first of them (a run of events is parsed on its own),
    // and garbage after the events, in the rest of the document.
    const between = text.indexOf('\n{"id"', text.indexOf('\n{"id"') + 1) + 1
    const closing = text.lastIndexOf('}')
    for (const at of [between, text.indexOf('"chains"'), closing]) {
      const broken = text.slice(0, at) + 'x' + text.slice(at)
      const file = path.join(dir, 'broken.atrail.json')
      await writeFile(file, broken)
      const line = broken.slice(0, at).split('\n').length
      const column = at - broken.lastIndexOf('\n', at - 1)
      const res = await runCli(['verify', '--package', file])
      expect(res.code, res.stderr).to.equal(2)
      expect(res.stderr.trim().split('\n')).to.have.length(1)
      expect(res.stderr).to.contain(`is not JSON: `)
      const byte = Buffer.byteLength(broken.slice(0, at))
      expect(res.stderr).to.contain(`at byte ${byte} (line ${line}, column ${column})`)
    }
  })

  it('says where a truncated package ends', async () => {
    const file = path.join(dir, 'truncated.atrail.json')
    const cut = text.slice(0, Math.floor(text.length / 2))
    await writeFile(file, cut)
    const res = await runCli(['verify', '--package', file])
    expect(res.code).to.equal(2)
    expect(res.stderr).to.match(new RegExp(`at byte ${Buffer.byteLength(cut)} \\(line \\d+, column \\d+\\)`))
  })
})
