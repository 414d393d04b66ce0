import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {runCli, startServe} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'

/** The CLI as a user runs it: receipts of events on a data directory and from a server, checked offline. */
describe('the CLI: receipt, verify --receipt, export --receipts', function () {
  this.timeout(180_000)
  let dir: string
  let data: string
  let logKey: string
  let otherLogKey: string
  let ids: string[]

  before(async () => {
    dir = await tempDir()
    data = path.join(dir, 'data')
    const events = Array.from({length: 7}, (_, i) => ({
      agent_id: `agent-${i % 2}`,
      action_type: 'TOOL_CALL',
      action_name: `step-${i}`,
    }))
    const ingest = await runCli(['ingest', '--data-dir', data, '-'], {input: JSON.stringify(events)})
    expect(ingest.code, ingest.stderr).to.equal(0)
    logKey = (await runCli(['keys', 'log', '--data-dir', data])).stdout.trim()
    const other = path.join(dir, 'other')
    expect((await runCli(['ingest', '--data-dir', other, '-'], {input: JSON.stringify(events[0])})).code).to.equal(0)
    otherLogKey = (await runCli(['keys', 'log', '--data-dir', other])).stdout.trim()
    expect(otherLogKey).to.match(/^audit-trail\.invalid\/[0-9a-f]{16}\+[0-9a-f]{8}\+/)
    const list = await runCli(['events', 'list', '--data-dir', data, '--json'])
    ids = (JSON.parse(list.stdout) as Array<{id: string}>).map((e) => e.id)
  })
  after(async () => {
    await removeDir(dir)
  })

  async function eventFile(id: string, change?: (event: Record<string, unknown>) => void): Promise<string> {
    const event = JSON.parse((await runCli(['events', 'get', id, '--data-dir', data, '--json'])).stdout)
    change?.(event)
    const file = path.join(dir, `${id}${change ? '-changed' : ''}.json`)
    await writeFile(file, JSON.stringify(event))
    return file
  }

  it('writes a receipt that verify --receipt accepts with the log key (exit 0)', async () => {
    const file = path.join(dir, 'receipt-3.cose')
    const written = await runCli(['receipt', ids[3]!, '-o', file, '--data-dir', data])
    expect(written.code, written.stderr).to.equal(0)
    expect(written.stdout).to.match(/leaf 3 of the tree of 7 events/)
    const verified = await runCli([
      'verify',
      '--receipt',
      file,
      '--event',
      await eventFile(ids[3]!),
      '--log-key',
      logKey,
    ])
    expect(verified.code, verified.stderr).to.equal(0)
    expect(verified.stdout).to.match(new RegExp(`valid: event ${ids[3]} is leaf 3 of the tree of 7 events`))
    const json = await runCli([
      'verify',
      '--receipt',
      file,
      '--event',
      await eventFile(ids[3]!),
      '--log-key',
      logKey,
      '--json',
    ])
    expect(JSON.parse(json.stdout)).to.include({valid: true, leaf_index: 3, tree_size: 7})
  })

  it('fails (exit 1) for a changed event, another event, a changed receipt and another log key', async () => {
    const file = path.join(dir, 'receipt-2.cose')
    expect((await runCli(['receipt', ids[2]!, '-o', file, '--tree-size', '5', '--data-dir', data])).code).to.equal(0)
    const flipped = path.join(dir, 'receipt-2-flipped.cose')
    const bytes = await readFile(file)
    bytes[bytes.length - 10]! ^= 0x01
    await writeFile(flipped, bytes)
    const cases: Array<[string, string, string, RegExp]> = [
      ['a changed event', file, await eventFile(ids[2]!, (e) => (e.action_name = 'other')), /does not match its hash/],
      ['another event', file, await eventFile(ids[4]!), /the receipt proves leaf 2, but event .* is leaf 4/],
      ['a flipped byte', flipped, await eventFile(ids[2]!), /does not verify/],
    ]
    for (const [what, receipt, event, message] of cases) {
      const result = await runCli(['verify', '--receipt', receipt, '--event', event, '--log-key', logKey])
      expect(result.code, what).to.equal(1)
      expect(result.stdout, what).to.match(message)
    }
    const other = await runCli([
      'verify',
      '--receipt',
      file,
      '--event',
      await eventFile(ids[2]!),
      '--log-key',
      otherLogKey,
    ])
    expect(other.code).to.equal(1)
    expect(other.stdout).to.match(/kid .* is not the given key/)
  })

  it('refuses bad input with exit 2', async () => {
    const file = path.join(dir, 'receipt-0.cose')
    expect((await runCli(['receipt', ids[0]!, '-o', file, '--data-dir', data])).code).to.equal(0)
    const event = await eventFile(ids[0]!)
    for (const args of [
      ['verify', '--receipt', file, '--event', event],
      ['verify', '--receipt', file, '--log-key', logKey],
      ['verify', '--receipt', path.join(dir, 'missing.cose'), '--event', event, '--log-key', logKey],
      ['verify', '--receipt', file, '--event', file, '--log-key', logKey],
      ['verify', '--receipt', event, '--event', event, '--log-key', logKey],
      ['verify', '--receipt', file, '--event', event, '--log-key', 'not-a-key'],
      ['receipt', ids[0]!, '--tree-size', '0', '--data-dir', data],
      ['receipt', '00000000-0000-4000-8000-000000000000', '--data-dir', data],
    ]) {
      const result = await runCli(args)
      expect(result.code, args.join(' ')).to.equal(2)
      expect(result.stderr, args.join(' ')).to.match(/^Error: /)
    }
  })

  it('exports a receipt per event that verify --package checks, with and without the log key', async () => {
    const pkgFile = path.join(dir, 'receipts.atrail.json')
    const exported = await runCli(['export', '--receipts', '-o', pkgFile, '--data-dir', data])
    expect(exported.code, exported.stderr).to.equal(0)
    const pkg = JSON.parse(await readFile(pkgFile, 'utf8'))
    expect(Object.keys(pkg.receipts)).to.have.members(ids)
    expect(pkg.checkpoint.note.split('\n')[1]).to.equal(String(pkg.merkle.tree_size))
    const unkeyed = await runCli(['verify', '--package', pkgFile])
    expect(unkeyed.code, unkeyed.stdout).to.equal(0)
    expect(unkeyed.stdout).to.match(/receipts: 7 COSE Receipts, .*signatures were not checked/)
    const keyed = await runCli(['verify', '--package', pkgFile, '--log-key', logKey])
    expect(keyed.code, keyed.stdout).to.equal(0)
    expect(keyed.stdout).to.match(
      /receipts: 7 COSE Receipts, each proving its event in the package tree, signed by the log key/,
    )
    expect((await runCli(['verify', '--package', pkgFile, '--log-key', otherLogKey])).code).to.equal(1)
    // A receipt moved to another event, or one missing, fails the package.
    const swapped = structuredClone(pkg)
    ;[swapped.receipts[ids[0]!], swapped.receipts[ids[1]!]] = [pkg.receipts[ids[1]!], pkg.receipts[ids[0]!]]
    const missing = structuredClone(pkg)
    delete missing.receipts[ids[6]!]
    for (const [name, variant, message] of [
      ['swapped', swapped, /the receipt of event .* (does not verify|is for leaf 1 of 7, not leaf 0)/],
      ['missing', missing, /6 receipts for 7 events/],
    ] as const) {
      const file = path.join(dir, `${name}.atrail.json`)
      await writeFile(file, JSON.stringify(variant))
      const result = await runCli(['verify', '--package', file])
      expect(result.code, name).to.equal(1)
      expect(result.stdout, name).to.match(message)
    }
  })

  it('gets receipts and receipt packages from a running server the same way', async () => {
    const served = path.join(dir, 'served')
    const server = await startServe(['--data-dir', served])
    try {
      const ingest = await runCli(['ingest', '--server', server.url, '-'], {
        input: JSON.stringify({agent_id: 'remote', action_type: 'TOOL_CALL', action_name: 'x'}),
      })
      expect(ingest.code, ingest.stderr).to.equal(0)
      const [event] = JSON.parse((await runCli(['events', 'list', '--server', server.url, '--json'])).stdout)
      const file = path.join(dir, 'remote.cose')
      const written = await runCli(['receipt', event.id, '-o', file, '--server', server.url])
      expect(written.code, written.stderr).to.equal(0)
      const key = (await runCli(['keys', 'log', '--server', server.url])).stdout.trim()
      const eventPath = path.join(dir, 'remote.json')
      await writeFile(eventPath, JSON.stringify(event))
      expect((await runCli(['verify', '--receipt', file, '--event', eventPath, '--log-key', key])).code).to.equal(0)
      const pkgFile = path.join(dir, 'remote.atrail.json')
      expect((await runCli(['export', '--receipts', '-o', pkgFile, '--server', server.url])).code).to.equal(0)
      expect((await runCli(['verify', '--package', pkgFile, '--log-key', key])).code).to.equal(0)
      const missing = await runCli(['receipt', '00000000-0000-4000-8000-000000000000', '--server', server.url])
      expect(missing.code).to.equal(2)
    } finally {
      await server.stop()
    }
  })
})
