import {expect} from 'chai'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {openAudit} from '../../src/services/audit.js'
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
    // A signed checkpoint, so that the package carries one.
    const services = await openAudit({dataDir})
    await services.checkpoints.signIfGrown().finally(() => services.close())
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
    expect(human.stdout).to.contain('INVALID: the package has the member $.events twice')
    const json = await runCli(['verify', '--package', file, '--json'])
    expect(json.code).to.equal(1)
    const result = JSON.parse(json.stdout)
    expect(result.valid).to.equal(false)
    expect(result.failure.check).to.equal('format')
    expect(result.failure.message).to.match(/member \$\.events twice/)
  })

  it('calls a package with a member given twice at any depth invalid (exit 1), naming its path', async () => {
    const pkg = JSON.parse(text)
    expect(pkg.checkpoint, 'the fixture has a checkpoint').to.be.an('object')
    const [first] = pkg.events
    const second = pkg.events[1]
    // Each edit gives a member a second time, first with a value that the hash does not cover
    // (JSON.parse keeps the last one, so all but the package's shape still verifies).
    const edits: Array<[string, string, string]> = [
      [`{"id":"${second.id}",`, `{"id":"${second.id}","id":"${first.id}",`, '$.events[1].id'],
      [`"labels":{"env":"prod"`, `"labels":{"env":"FAKE-staging","env":"prod"`, '$.events[0].labels.env'],
      [`"input":{"prompt":`, `"input":{"prompt":"other","prompt":`, '$.events[0].input.prompt'],
      [
        `"${second.id}":{"leaf_index":`,
        `"${second.id}":{"leaf_index":0,"leaf_index":`,
        `$.proofs["${second.id}"].leaf_index`,
      ],
      [`"checkpoint":{"note":`, `"checkpoint":{"note":"forged","note":`, '$.checkpoint.note'],
      [`"chains":{"billing-bot":{`, `"chains":{"billing-bot":{"head_hash":"0",`, '$.chains["billing-bot"].head_hash'],
    ]
    for (const [find, replace, where] of edits) {
      expect(text, find).to.contain(find)
      const file = path.join(dir, 'deep-twice.atrail.json')
      await writeFile(file, text.replace(find, replace))
      const result = await runCli(['verify', '--package', file])
      expect(result.code, `${where}: ${result.stdout}${result.stderr}`).to.equal(1)
      expect(result.stdout).to.contain(`INVALID: the package has the member ${where} twice`)
    }
    // The unchanged package verifies: the edits alone make the difference.
    const file = path.join(dir, 'unchanged.atrail.json')
    await writeFile(file, text)
    expect((await runCli(['verify', '--package', file])).code).to.equal(0)
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
