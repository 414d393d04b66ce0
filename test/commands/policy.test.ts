import {expect} from 'chai'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {runCli, startServe, ROOT} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {forEachStore, storeFlags} from '../support/stores.js'
import {parseXml, type XmlElement} from '../support/xml.js'

const SAMPLE = path.join(ROOT, 'examples', 'events.ndjson')

/** Parses JUnit XML just enough to read the test cases and their failures. */
function junitCases(xml: string): Array<{name: string; failed: boolean}> {
  expect(xml.trimStart()).to.match(/^<\?xml[^>]*\?>\s*<testsuites/)
  return [...xml.matchAll(/<testcase\b[^>]*\bname="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)].map((m) => ({
    name: m[1]!,
    failed: (m[3] ?? '').includes('<failure'),
  }))
}

describe('audit-trail policy check', function () {
  this.timeout(90_000)
  let dir: string
  let dataDir: string
  let passing: string
  let failing: string
  let invalid: string
  before(async () => {
    dir = await tempDir()
    dataDir = path.join(dir, 'data')
    passing = path.join(dir, 'passing.yaml')
    failing = path.join(dir, 'failing.json')
    invalid = path.join(dir, 'invalid.yaml')
    await writeFile(
      passing,
      'policies:\n  - name: chains\n    type: chain_integrity\n  - name: env everywhere\n    type: ' +
        'required_labels\n    labels: [env]\n',
    )
    await writeFile(
      failing,
      JSON.stringify({
        policies: [
          {name: 'no deploy failures', type: 'max_failure_rate', max: 0.1},
          {name: 'env everywhere', type: 'required_labels', labels: ['env']},
        ],
      }),
    )
    await writeFile(
      invalid,
      'policies:\n  - name: broken\n    type: max_rate\n    match: {action_type: LLM_CALL}\n    max: -3\n    per: 1m\n',
    )
    expect((await runCli(['ingest', SAMPLE, '--data-dir', dataDir])).code).to.equal(0)
  })
  after(async () => {
    await removeDir(dir)
  })

  forEachStore((store) => {
    const on = storeFlags(store)

    it('exits 0 when every rule passes and 1 when one is violated, on the store', async () => {
      const storeDir = path.join(dir, `store-${store}`)
      expect((await runCli(['ingest', SAMPLE, ...on(storeDir)])).code).to.equal(0)
      const ok = await runCli(['policy', 'check', '--policy', passing, ...on(storeDir)])
      expect(ok.code, ok.stderr).to.equal(0)
      const bad = await runCli(['policy', 'check', '--policy', failing, ...on(storeDir), '--format', 'json'])
      expect(bad.code).to.equal(1)
      const report = JSON.parse(bad.stdout)
      expect(report.passed).to.equal(false)
      expect(report.events_checked).to.equal(8)
      expect(report.results.find((r: any) => r.name === 'no deploy failures').passed).to.equal(false)
    })
  })

  it('exits 2 naming the rule and the field for an invalid policy file, and for a missing one', async () => {
    const res = await runCli(['policy', 'check', '--policy', invalid, '--data-dir', dataDir])
    expect(res.code).to.equal(2)
    expect(res.stderr).to.contain('broken')
    expect(res.stderr).to.contain('policies[0].max')
    // One line, each problem once.
    const lines = res.stderr.trim().split('\n')
    expect(lines).to.have.length(1)
    expect(lines[0]!.split('policies[0].max').length - 1).to.equal(1)
    await writeFile(invalid, 'policies:\n  - type: nope\n')
    const two = await runCli(['policy', 'check', '--policy', invalid, '--data-dir', dataDir])
    expect(two.code).to.equal(2)
    expect(two.stderr.trim()).to.match(
      new RegExp(
        String.raw`^Error: invalid policy file .*: policy rule at policies\[0\]: ` +
          String.raw`policies\[0\]\.name [^;]+; policies\[0\]\.type [^;]+$`,
      ),
    )
    expect(two.stderr).not.to.contain('more problem')
    expect(
      (await runCli(['policy', 'check', '--policy', path.join(dir, 'nope.yaml'), '--data-dir', dataDir])).code,
    ).to.equal(2)
  })

  it('writes JUnit XML with one test case per rule and a failure per violated rule', async () => {
    const res = await runCli(['policy', 'check', '--policy', failing, '--data-dir', dataDir, '--format', 'junit'])
    expect(res.code).to.equal(1)
    expect(junitCases(res.stdout)).to.deep.equal([
      {name: 'no deploy failures', failed: true},
      {name: 'env everywhere', failed: false},
    ])
  })

  it('writes a JUnit document with one errored test case naming why when the check cannot run', async () => {
    const bad = path.join(dir, 'bad-max.yaml')
    await writeFile(bad, 'policies:\n  - name: broken\n    type: max_failure_rate\n    max: -3\n')
    // Nothing listens on port 9 of the loopback (discard): the server cannot be reached.
    const unreachable = /cannot reach the server at http:\/\/127\.0\.0\.1:9\b/
    for (const [argv, code, reason] of [
      [['--policy', bad, '--data-dir', dataDir], 2, /invalid policy file .*policies\[0\]\.max/],
      [['--policy', passing, '--server', 'http://127.0.0.1:9'], 3, unreachable],
      [['--policy', passing, '--data-dir', dataDir, '--nope'], 2, /Nonexistent flag: --nope/],
    ] as const) {
      const res = await runCli(['policy', 'check', ...argv, '--format', 'junit'])
      expect(res.code, res.stderr).to.equal(code)
      expect(res.stderr.trim().split('\n'), res.stderr).to.have.length(1)
      const suites = parseXml(res.stdout)
      const suite = suites.children.find((c) => c.name === 'testsuite')!
      expect(suite.attributes).to.include({tests: '1', failures: '0', errors: '1'})
      const testcase = suite.children.find((c) => c.name === 'testcase') as XmlElement
      const error = testcase.children.find((c) => c.name === 'error')!
      expect(error.attributes.message).to.match(reason)
      expect(res.stderr).to.contain(error.attributes.message!.slice(0, 40))
    }
  })

  it('checks an exported package offline, and a running server', async () => {
    const file = path.join(dir, 'evidence.atrail.json')
    expect((await runCli(['export', '-o', file, '--data-dir', dataDir])).code).to.equal(0)
    expect((await runCli(['policy', 'check', '--policy', passing, '--package', file])).code).to.equal(0)
    expect((await runCli(['policy', 'check', '--policy', failing, '--package', file])).code).to.equal(1)
    expect(
      (await runCli(['policy', 'check', '--policy', failing, '--package', file, '--agent', 'support-bot'])).code,
    ).to.equal(0)
    // A tampered event in a package reads as the same fault in a store would (GET /v1/verify's reasons).
    const pkg = JSON.parse(await readFile(file, 'utf8'))
    pkg.events[4].action_name = 'tampered'
    const tampered = path.join(dir, 'tampered.atrail.json')
    await writeFile(tampered, JSON.stringify(pkg))
    const chains = await runCli(['policy', 'check', '--policy', passing, '--package', tampered, '--format', 'json'])
    expect(chains.code).to.equal(1)
    const violation = JSON.parse(chains.stdout).results.find((r: any) => r.name === 'chains').violations[0]
    expect(violation).to.include({
      agent_id: pkg.events[4].agent_id,
      sequence: pkg.events[4].sequence,
      event_id: pkg.events[4].id,
    })
    expect(violation.message).to.contain(`does not verify: hash_mismatch at sequence ${pkg.events[4].sequence}`)
    const server = await startServe(['--data-dir', dataDir])
    try {
      expect((await runCli(['policy', 'check', '--policy', passing, '--server', server.url])).code).to.equal(0)
      expect((await runCli(['policy', 'check', '--policy', failing, '--server', server.url])).code).to.equal(1)
      expect((await runCli(['policy', 'check', '--policy', invalid, '--server', server.url])).code).to.equal(2)
    } finally {
      await server.stop()
    }
  })
})
