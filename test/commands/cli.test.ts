import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {mkdir, readdir, writeFile, readFile} from 'node:fs/promises'
import path from 'node:path'
import {runCli, startServe, ROOT} from '../support/cli.js'
import {removeDir} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'
import {forEachStore, storeFlags} from '../support/stores.js'

const SAMPLE = path.join(ROOT, 'examples', 'events.ndjson')

describe('the CLI (bin/run.js)', function () {
  this.timeout(60_000)
  const dir = useTempDir()
  const dataDir = path.join(dir, 'data')

  it('exits 2 with one sentence for a missing file, a bad flag value and garbage input', async () => {
    const missing = await runCli(['ingest', path.join(dir, 'nope.json'), '--data-dir', dataDir])
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.match(/nope\.json/)
    expect(missing.stderr).not.to.match(/\n\s+at /)
    const badLimit = await runCli(['events', 'list', '--limit', '5000', '--data-dir', dataDir])
    expect(badLimit.code).to.equal(2)
    expect(badLimit.stderr).to.match(/limit/)
    const garbage = await runCli(['ingest', '-', '--data-dir', dataDir], {input: '[1, 2'})
    expect(garbage.code).to.equal(2)
    const unknownFlag = await runCli(['stats', '--nope'])
    expect(unknownFlag.code).to.equal(2)
  })

  it(
    'says a usage or input error in one sentence on stderr ' +
      'with exit 2, --json or not (nothing of oclif on stdout)',
    async () => {
      await mkdir(dataDir)
      const cases = [
        {argv: ['stats', '--bogus', '--json', '--data-dir', dataDir], stderr: /--bogus/},
        {argv: ['events', 'get', '--json', '--data-dir', dataDir], stderr: /id/i},
        {argv: ['keys', 'generate', '--bogus', '--json'], stderr: /--bogus/},
        {argv: ['verify', '--package', path.join(dir, 'nope.atrail.json'), '--json'], stderr: /cannot read .*nope/},
        {argv: ['events', 'list', '--limit', '5000', '--json', '--data-dir', dataDir], stderr: /limit/},
      ]
      // More input errors that used to crash (exit 1, a stack trace) or pass silently.
      cases.push(
        {
          argv: ['export', '--data-dir', dataDir, '-o', path.join(dir, 'no', 'such', 'dir', 'x.atrail.json')],
          stderr: /cannot write .*x\.atrail\.json: no such directory/,
        },
        {argv: ['export', '--data-dir', dataDir, '--label', 'env'], stderr: /--label env: expected key=value/},
        {
          argv: ['events', 'list', '--data-dir', dataDir, '--label', '=x', '--json'],
          stderr: /--label =x: expected key=value/,
        },
        {argv: ['tail', '--server', 'notaurl'], stderr: /--server notaurl is not an http/},
        {argv: ['tail', '--server', 'ftp://127.0.0.1:8080'], stderr: /is not an http/},
        // A second value for one label would replace the first unsaid (GET /v1/events refuses it too).
        {
          argv: ['events', 'list', '--data-dir', dataDir, '--label', 'env=prod', '--label', 'env=dev'],
          stderr: /--label env is given more than once/,
        },
        {
          argv: [
            'export',
            '--data-dir',
            dataDir,
            '--label',
            'env=prod',
            '--label',
            'env=dev',
            '-o',
            path.join(dir, 'x.atrail.json'),
          ],
          stderr: /--label env is given more than once/,
        },
      )
      // Parse errors without --json: oclif's several lines and the whole usage became one sentence.
      cases.push(
        {argv: ['stats', '--nope'], stderr: /^Error: Nonexistent flag: --nope \(see --help\)$/m},
        {argv: ['policy', 'check'], stderr: /^Error: Missing required flag --policy \(see --help\)$/m},
        {argv: ['events', 'get'], stderr: /^Error: Missing 1 required arg: id/},
        {
          argv: ['timestamp', '--tsa-url', 'http://127.0.0.1:9'],
          stderr: /^Error: All of the following must be provided when using --tsa-url: --tsa-ca/,
        },
        {argv: ['serve', '--port', 'abc'], stderr: /^Error: Parsing --port Expected an integer but received: abc/},
        {argv: ['tail', '--nope'], stderr: /^Error: Nonexistent flag: --nope/},
        {
          argv: [
            'policy',
            'check',
            '--policy',
            path.join(ROOT, 'examples', 'policy.yaml'),
            '--json',
            '--format',
            'junit',
            '--data-dir',
            dataDir,
          ],
          stderr: /^Error: --format junit cannot be used with --json/,
        },
        // A word no command takes (oclif read `stats extra` as a command "stats:extra").
        {
          argv: ['stats', 'extra'],
          stderr: /^Error: audit-trail stats takes no argument "extra" \(see audit-trail stats --help\)$/m,
        },
        {
          argv: ['events', 'lst'],
          stderr:
            /^Error: audit-trail events has no command "lst": did you mean "events list"\? \(it has get, list\)$/m,
        },
        {argv: ['nosuch'], stderr: /^Error: "nosuch" is not a command of audit-trail \(see audit-trail --help\)$/m},
      )
      for (const {argv, stderr} of cases) {
        const res = await runCli(argv)
        expect(res.code, `${argv.join(' ')}: ${res.stdout.slice(0, 200)}`).to.equal(2)
        // With --json, an error the command met (not a parse error) is also the API's error body on stdout.
        const body = res.stdout === '' ? undefined : JSON.parse(res.stdout)
        if (body !== undefined) expect(`Error: ${body.error.message}\n`, argv.join(' ')).to.equal(res.stderr)
        if (!argv.includes('--json')) expect(res.stdout, argv.join(' ')).to.equal('')
        expect(res.stderr, argv.join(' ')).to.match(stderr)
        expect(res.stderr.trim().split('\n'), argv.join(' ')).to.have.length(1)
      }
    },
  )

  it('refuses a locked data directory (exit 3, names the pid, suggests --server), works through --server', async () => {
    const server = await startServe(['--data-dir', dataDir])
    try {
      const locked = await runCli(['stats', '--data-dir', dataDir])
      expect(locked.code).to.equal(3)
      expect(locked.stderr).to.contain(String(server.child.pid))
      expect(locked.stderr).to.contain('--server')
      const second = await runCli(['serve', '--port', '0', '--data-dir', dataDir])
      expect(second.code).to.equal(3)
      const ingest = await runCli(['ingest', SAMPLE, '--server', server.url])
      expect(ingest.code, ingest.stderr).to.equal(0)
      const list = await runCli(['events', 'list', '--json', '--server', server.url, '--label', 'env=staging'])
      expect(JSON.parse(list.stdout).map((e: any) => e.labels.env)).to.deep.equal(['staging', 'staging'])
      const missing = await runCli(['events', 'get', '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8000', '--server', server.url])
      expect(missing.code).to.equal(2)
      expect(missing.stderr).to.match(/no event/)
      // --data-dir and --server together: which store was meant? A flag beats the environment.
      const other = path.join(dir, 'other')
      expect(
        (
          await runCli(['ingest', '-', '--data-dir', other], {
            input: '{"agent_id": "x", "action_type": "DECISION", "action_name": "y"}',
          })
        ).code,
      ).to.equal(0)
      const both = await runCli(['stats', '--data-dir', other, '--server', server.url])
      expect(both.code).to.equal(2)
      expect(both.stderr.trim()).to.equal('Error: give either --data-dir or --server, not both')
      const flagOverEnv = await runCli(['stats', '--json', '--data-dir', other], {
        env: {AUDIT_TRAIL_SERVER: server.url},
      })
      expect(JSON.parse(flagOverEnv.stdout).total_events).to.equal(1)
      const envDataDir = await runCli(['stats', '--json', '--server', server.url], {env: {AUDIT_TRAIL_DATA_DIR: other}})
      expect(JSON.parse(envDataDir.stdout).total_events).to.equal(8)
      const policyBoth = await runCli(
        ['policy', 'check', '--policy', path.join(ROOT, 'examples', 'policy.yaml'), '--data-dir', other],
        {env: {AUDIT_TRAIL_SERVER: server.url}},
      )
      expect(policyBoth.stdout).to.match(/over 1 event/)
    } finally {
      expect(await server.stop('SIGTERM')).to.equal(0)
    }
    // The lock is released and the snapshot written on SIGTERM.
    expect(await readdir(dataDir)).to.include('events.sqlite')
    const after = await runCli(['stats', '--json', '--data-dir', dataDir])
    expect(after.code, after.stderr).to.equal(0)
    expect(JSON.parse(after.stdout).total_events).to.equal(8)
  })

  it('reads only an existing data directory: a mistyped path is exit 2 and is not created', async () => {
    // Otherwise verify and policy check would pass on an empty store made on the spot.
    for (const argv of [
      ['verify'],
      ['stats', '--json'],
      ['events', 'list'],
      ['policy', 'check', '--policy', path.join(ROOT, 'examples', 'policy.yaml')],
      ['export', '-o', path.join(dir, 'x.atrail.json')],
    ]) {
      const res = await runCli([...argv, '--data-dir', dataDir])
      expect(res.code, argv.join(' ')).to.equal(2)
      // With --json the error is also the API's error body on stdout (README.md, "Exit codes").
      if (argv.includes('--json')) expect(JSON.parse(res.stdout).error.code).to.equal('validation_error')
      else expect(res.stdout, argv.join(' ')).to.equal('')
      expect(res.stderr.trim(), argv.join(' ')).to.equal(
        `Error: no data directory at ${dataDir}: nothing has been recorded there (serve, ingest and timestamp ` +
          `create one); to ask a running server, give --server URL`,
      )
    }
    expect(await readdir(dir)).to.deep.equal([])
    // An existing directory with other things in it and no store (`--data-dir .` by mistake).
    await mkdir(path.join(dir, 'project'))
    await writeFile(path.join(dir, 'project', 'README.md'), 'x')
    const notStore = await runCli(['verify', '--data-dir', path.join(dir, 'project')])
    expect(notStore.code).to.equal(2)
    expect(notStore.stderr.trim()).to.equal(
      `Error: ${path.join(dir, 'project')} is not an audit-trail data directory (it has no events.sqlite and no ` +
        `journal); to ask a running server, give --server URL`,
    )
    expect(await readdir(path.join(dir, 'project'))).to.deep.equal(['README.md'])
    // An empty directory is an empty store.
    await mkdir(path.join(dir, 'empty'))
    expect((await runCli(['verify', '--data-dir', path.join(dir, 'empty')])).code).to.equal(0)
    await removeDir(path.join(dir, 'project'))
    await removeDir(path.join(dir, 'empty'))
    // A path that is a file, for reading and for serving.
    const file = path.join(dir, 'file')
    await writeFile(file, 'x')
    for (const argv of [['stats'], ['ingest', SAMPLE], ['serve', '--port', '0']]) {
      const res = await runCli([...argv, '--data-dir', file])
      expect(res.code, argv.join(' ')).to.equal(2)
      expect(res.stderr.trim(), argv.join(' ')).to.equal(
        `Error: data directory ${file} is not a directory; give --data-dir a directory`,
      )
    }
    // The commands that record make it, parents included; then reads work on it.
    const nested = path.join(dir, 'a', 'b')
    expect((await runCli(['ingest', SAMPLE, '--data-dir', nested])).code).to.equal(0)
    expect(JSON.parse((await runCli(['stats', '--json', '--data-dir', nested])).stdout).total_events).to.equal(8)
  })

  it('exits 2 with one sentence when the data directory holds a file that is not SQLite, serve included', async () => {
    const broken = path.join(dir, 'broken')
    await mkdir(broken)
    await writeFile(path.join(broken, 'events.sqlite'), 'garbage')
    for (const argv of [
      ['serve', '--port', '0'],
      ['stats'],
      ['verify'],
      ['policy', 'check', '--policy', path.join(ROOT, 'examples', 'policy.yaml')],
    ]) {
      const res = await runCli([...argv, '--data-dir', broken])
      expect(res.code, argv.join(' ')).to.equal(2)
      expect(res.stderr.trim().split('\n'), argv.join(' ')).to.have.length(1)
      expect(res.stderr, argv.join(' ')).to.equal(
        `Error: cannot open the data directory ${broken}: file is not a database\n`,
      )
    }
  })

  it('exits 3 when the server is unreachable', async () => {
    const res = await runCli(['stats', '--server', 'http://127.0.0.1:9'])
    expect(res.code).to.equal(3)
    expect(res.stderr).to.match(/cannot reach/)
  })

  it('exports, verifies the package offline, and detects a tampered package (exit 1)', async () => {
    await runCli(['ingest', SAMPLE, '--data-dir', dataDir])
    const ts = await runCli(['timestamp', '--data-dir', dataDir, '--json'])
    expect(ts.code, ts.stderr).to.equal(0)
    const file = path.join(dir, 'evidence.atrail.json')
    const exported = await runCli(['export', '-o', file, '--data-dir', dataDir])
    expect(exported.code, exported.stderr).to.equal(0)
    const ok = await runCli(['verify', '--package', file])
    expect(ok.code, ok.stdout + ok.stderr).to.equal(0)
    expect(ok.stdout).to.match(/valid: 8 events/)
    expect(ok.stdout).to.contain('selection: every event of the tree (no filter), checked to be complete')
    expect(ok.stdout).to.match(/came from the package itself/)
    const ca = path.join(dir, 'ca.pem')
    await writeFile(ca, await readFile(path.join(dataDir, 'tsa', 'ca.pem')))
    const anchored = await runCli(['verify', '--package', file, '--tsa-ca', ca])
    expect(anchored.code).to.equal(0)
    expect(anchored.stdout).not.to.match(/came from the package itself/)
    const pkg = JSON.parse(await readFile(file, 'utf8'))
    // Whoever brings a trust anchor asks for a timestamp: a package without one fails then.
    await writeFile(path.join(dir, 'unstamped.atrail.json'), JSON.stringify({...pkg, timestamp: null}))
    expect((await runCli(['verify', '--package', path.join(dir, 'unstamped.atrail.json')])).code).to.equal(0)
    const unstamped = await runCli(['verify', '--package', path.join(dir, 'unstamped.atrail.json'), '--tsa-ca', ca])
    expect(unstamped.code).to.equal(1)
    expect(unstamped.stdout).to.contain(
      'the package has no timestamp to check against the given trust anchors (--tsa-ca)',
    )
    const agentOnly = path.join(dir, 'agent.atrail.json')
    expect((await runCli(['export', '--agent', 'billing-bot', '-o', agentOnly, '--data-dir', dataDir])).code).to.equal(
      0,
    )
    expect((await runCli(['verify', '--package', agentOnly])).stdout).to.contain(
      "selection: agent_id = billing-bot, the agent's whole chain up to the tree size, checked to be complete",
    )
    pkg.events[3].action_name = 'tampered'
    await writeFile(file, JSON.stringify(pkg))
    const bad = await runCli(['verify', '--package', file])
    expect(bad.code).to.equal(1)
    expect(bad.stdout).to.contain(pkg.events[3].id)
    const missing = await runCli(['verify', '--package', path.join(dir, 'nope.atrail.json')])
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.match(
      /cannot read .* \(no such file\): give the path of an \.atrail\.json evidence package/,
    )
    await writeFile(path.join(dir, 'garbage.atrail.json'), '{"format": ')
    const garbage = await runCli(['verify', '--package', path.join(dir, 'garbage.atrail.json')])
    expect(garbage.code).to.equal(2)
    expect(garbage.stderr).to.match(/not JSON/)
    // JSON that is not an evidence package: verify names the failed check (exit 1, docs/verification.md
    // section 1); a policy check has no events to check and calls it an invalid file (exit 2).
    for (const [name, text] of [
      ['other.json', '{"events": []}'],
      ['array.json', '[]'],
      ['v3.atrail.json', JSON.stringify({...pkg, version: 3})],
    ]) {
      await writeFile(path.join(dir, name), text)
      const other = await runCli(['verify', '--package', path.join(dir, name)])
      expect(other.code, name).to.equal(1)
      expect(other.stdout, name).to.match(/INVALID: not an atrail-evidence version 1 or 2 document/)
      const policy = await runCli([
        'policy',
        'check',
        '--policy',
        path.join(ROOT, 'examples', 'policy.yaml'),
        '--package',
        path.join(dir, name),
      ])
      expect(policy.code, name).to.equal(2)
      expect(policy.stderr, name).to.match(/is not an evidence package/)
      expect(policy.stderr.trim().split('\n'), name).to.have.length(1)
    }
    // A damaged timestamp record is named as such (exit 1), never a JavaScript error. (pkg still
    // holds the event changed above: a package's shape is checked before any of its events.)
    const damaged: Array<[string, (ts: any) => void, RegExp]> = [
      ['no-proof', (ts) => delete ts.consistency_proof, /timestamp\.consistency_proof is missing/],
      ['null-proof', (ts) => (ts.consistency_proof = null), /timestamp\.consistency_proof is not a list of hashes/],
      ['string-proof', (ts) => (ts.consistency_proof = 'abc'), /timestamp\.consistency_proof is not a list of hashes/],
      ['no-token', (ts) => delete ts.token, /timestamp\.token is missing/],
      ['number-token', (ts) => (ts.token = 123), /timestamp\.token is not a DER token in base64/],
      ['no-root', (ts) => delete ts.merkle_root, /timestamp\.merkle_root is missing/],
      ['no-size', (ts) => delete ts.tree_size, /timestamp\.tree_size is missing/],
      [
        'empty',
        (ts) => {
          for (const key of Object.keys(ts)) delete ts[key]
        },
        /timestamp\.token is missing/,
      ],
    ]
    await Promise.all(
      damaged.map(async ([name, damage, message]) => {
        const copy = JSON.parse(JSON.stringify(pkg))
        damage(copy.timestamp)
        await writeFile(path.join(dir, `${name}.atrail.json`), JSON.stringify(copy))
        const res = await runCli(['verify', '--package', path.join(dir, `${name}.atrail.json`)])
        expect(res.code, name).to.equal(1)
        expect(res.stdout, name).to.match(message)
        expect(res.stdout + res.stderr, name).not.to.match(/Cannot read|is not a function|must be of type/)
      }),
    )
    const noAlgorithm = JSON.parse(JSON.stringify(pkg))
    delete noAlgorithm.merkle.algorithm
    await writeFile(path.join(dir, 'no-algorithm.atrail.json'), JSON.stringify(noAlgorithm))
    expect((await runCli(['verify', '--package', path.join(dir, 'no-algorithm.atrail.json')])).stdout).to.contain(
      'merkle.algorithm is missing',
    )
  })

  it('detects an event changed in events.sqlite while the service was stopped (exit 1)', async () => {
    await runCli(['ingest', SAMPLE, '--data-dir', dataDir])
    for (const file of await readdir(dataDir)) {
      if (file !== 'events.sqlite' && file !== 'tsa' && !file.endsWith('.lock'))
        await removeDir(path.join(dataDir, file))
    }
    execFileSync('sqlite3', [
      path.join(dataDir, 'events.sqlite'),
      "update events set action_name = 'tampered' where agent_id = 'billing-bot' and sequence = 2",
    ])
    const res = await runCli(['verify', '--json', '--data-dir', dataDir])
    expect(res.code).to.equal(1)
    const result = JSON.parse(res.stdout)
    expect(result.valid).to.equal(false)
    expect(result.invalid_agents[0]).to.include({
      agent_id: 'billing-bot',
      first_invalid_sequence: 2,
      reason: 'hash_mismatch',
    })
  })

  it(
    "detects an agent's newest event deleted from " + 'events.sqlite, and the hole it leaves in the log (exit 1)',
    async () => {
      await runCli(['ingest', SAMPLE, '--data-dir', dataDir])
      for (const file of await readdir(dataDir))
        if (file.startsWith('journal')) await removeDir(path.join(dataDir, file))
      // support-bot's third and last event is index 2 of 8: the chain left is valid, and short.
      execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), 'delete from events where "index" = 2'])
      const res = await runCli(['verify', '--data-dir', dataDir])
      expect(res.code, res.stderr).to.equal(1)
      expect(res.stdout).to.contain(
        'INVALID: agent support-bot: sequence_gap at sequence 3 (missing: removed after it was recorded)',
      )
      expect(res.stdout).to.match(
        /INVALID: the log skips from index 2 to 3 \(event [0-9a-f-]{36}\): events were removed or renumbered/,
      )
      // The store refuses to record (storage_unavailable): could not record, exit 3.
      const ingest = await runCli(['ingest', SAMPLE, '--data-dir', dataDir])
      expect(ingest.code).to.equal(3)
      expect(ingest.stderr).to.match(
        /^Error: nothing was recorded: events\.sqlite holds 7 events under indexes up to 7, [^\n]*\n$/,
      )
    },
  )

  it(
    'timestamps verify leads with the verdict: a valid token over a tree the stored events no longer extend is ' +
      'INVALID (exit 1)',
    async () => {
      await runCli(['ingest', SAMPLE, '--data-dir', dataDir])
      expect((await runCli(['timestamp', '--data-dir', dataDir])).code).to.equal(0)
      const good = await runCli(['timestamps', 'verify', '--data-dir', dataDir])
      expect(good.code, good.stdout).to.equal(0)
      expect(good.stdout).to.match(/^valid: root [0-9a-f]{64} \(tree size 8\) signed at /)
      for (const file of await readdir(dataDir))
        if (file.startsWith('journal')) await removeDir(path.join(dataDir, file))
      execFileSync('sqlite3', [
        path.join(dataDir, 'events.sqlite'),
        `update events set action_name = 'tampered' where "index" = 0`,
      ])
      const res = await runCli(['timestamps', 'verify', '--data-dir', dataDir])
      expect(res.code).to.equal(1)
      const lines = res.stdout.trim().split('\n')
      expect(lines[0]).to.equal(
        'INVALID: the timestamped tree (size 8) is not a prefix of the stored events: they were changed after it ' +
          'was signed',
      )
      expect(lines[1]).to.match(/^token: valid, root [0-9a-f]{64} signed at /)
      expect(lines).to.include('consistent with stored events: NO')
    },
  )

  it('prints a new API key', async () => {
    const a = await runCli(['keys', 'generate'])
    const b = await runCli(['keys', 'generate'])
    expect(a.stdout.trim()).to.match(/^[A-Za-z0-9_-]{43}$/)
    expect(a.stdout).not.to.equal(b.stdout)
  })
})

describe('the CLI (bin/run.js) on each store', function () {
  this.timeout(60_000)
  const dir = useTempDir()
  const dataDir = path.join(dir, 'data')

  forEachStore((store) => {
    const on = storeFlags(store)

    it('events list --trace-id and --session-id find one run, and export takes them too', async () => {
      const trace = '0af7651916cd43dd8448eb211c80319c'
      const input = [
        {agent_id: 'planner', action_type: 'AGENT_ACTION', action_name: 'run', trace_id: trace, session_id: 'conv-1'},
        {agent_id: 'booking-service', action_type: 'TOOL_CALL', action_name: 'book', trace_id: trace},
        {agent_id: 'planner', action_type: 'AGENT_ACTION', action_name: 'other run', session_id: 'conv-2'},
      ]
        .map((event) => JSON.stringify(event))
        .join('\n')
      expect((await runCli(['ingest', '-', ...on(dataDir)], {input})).code).to.equal(0)
      const run = await runCli(['events', 'list', '--trace-id', trace, '--json', ...on(dataDir)])
      expect(run.code, run.stderr).to.equal(0)
      expect(JSON.parse(run.stdout).map((e: any) => e.action_name)).to.deep.equal(['run', 'book'])
      const session = await runCli(['events', 'list', '--session-id', 'conv-2', '--json', ...on(dataDir)])
      expect(JSON.parse(session.stdout).map((e: any) => e.action_name)).to.deep.equal(['other run'])
      const file = path.join(dir, 'run.atrail.json')
      expect((await runCli(['export', '--trace-id', trace, '-o', file, ...on(dataDir)])).code).to.equal(0)
      const exported = JSON.parse(await readFile(file, 'utf8'))
      expect(exported.filters).to.deep.equal({trace_id: trace})
      expect(exported.events.map((e: any) => e.action_name)).to.deep.equal(['run', 'book'])
      const verified = await runCli(['verify', '--package', file])
      expect(verified.code, verified.stdout + verified.stderr).to.equal(0)
    })

    it('ingests the sample NDJSON, lists, gets, searches, shows agents and stats', async () => {
      const ingest = await runCli(['ingest', SAMPLE, ...on(dataDir)])
      expect(ingest.code, ingest.stderr).to.equal(0)
      expect(ingest.stdout).to.match(/8 accepted, 0 rejected/)
      const list = await runCli(['events', 'list', '--agent', 'billing-bot', '--json', ...on(dataDir)])
      expect(list.code, list.stderr).to.equal(0)
      // The API's body: an array of events, not an object around it.
      const events = JSON.parse(list.stdout)
      expect(events).to.be.an('array').with.lengthOf(3)
      expect(events.map((e: any) => e.sequence)).to.deep.equal([1, 2, 3])
      const human = await runCli(['events', 'list', ...on(dataDir)])
      expect(human.stdout).to.match(/INDEX\s+TIMESTAMP\s+AGENT/)
      expect(human.stdout).to.contain('8 of 8 matching events')
      const get = await runCli(['events', 'get', events[0].id, '--json', ...on(dataDir)])
      expect(JSON.parse(get.stdout)).to.deep.equal(events[0])
      const search = await runCli(['search', 'refund', '--json', ...on(dataDir)])
      expect(JSON.parse(search.stdout).results.map((e: any) => e.action_name)).to.deep.equal([
        'approve_refund',
        'payments.refund',
      ])
      const agents = await runCli(['agents', '--json', ...on(dataDir)])
      expect(JSON.parse(agents.stdout).map((a: any) => [a.agent_id, a.event_count, a.chain_valid])).to.deep.equal([
        ['billing-bot', 3, true],
        ['deploy-pipeline', 2, true],
        ['support-bot', 3, true],
      ])
      const stats = await runCli(['stats', '--json', ...on(dataDir)])
      expect(JSON.parse(stats.stdout)).to.include({total_events: 8, total_agents: 3, chain_health: 1})
      const humanStats = await runCli(['stats', ...on(dataDir)])
      expect(humanStats.stdout).to.match(/total events\s+8\n/)
      // Only the data directory has an enforced capacity to report.
      if (store === 'sqljs') expect(humanStats.stdout).to.match(/\nstorage {10}0\.\d MiB of 2048\.0 MiB \(0\.0 %\)\n/)
      // Both breakdowns of GET /v1/stats, largest first: the sample has 7 successes and 1 failure.
      expect(humanStats.stdout).to.match(
        /by action type\n( {2}\S+\s+1\n){8}by status\n {2}success\s+7\n {2}failure\s+1\n$/,
      )
      const verify = await runCli(['verify', ...on(dataDir)])
      expect(verify.code).to.equal(0)
      expect(verify.stdout).to.match(/valid: 8 events of 3 agents/)
      // No timestamp yet: nothing anchors the log (exit 1), said with what to do, without a
      // "consistent: NO" that would read as tampering.
      const unstamped = await runCli(['timestamps', 'verify', ...on(dataDir)])
      expect(unstamped.code).to.equal(1)
      expect(unstamped.stdout).to.equal(
        'NOT ANCHORED: no timestamp has been issued yet; anchor the current root with `audit-trail timestamp`\n',
      )
      // One of each is said in the singular (wording, not the store: said once).
      if (store === 'sqljs') {
        const single = path.join(dir, 'single')
        await runCli(['ingest', '-', ...on(single)], {
          input: '{"agent_id": "solo", "action_type": "X", "action_name": "n"}',
        })
        expect((await runCli(['verify', ...on(single)])).stdout).to.equal('valid: 1 event of 1 agent verified\n')
      }
    })

    it('reads a JSON array and a single object from stdin, reports rejected events with reasons (exit 2)', async () => {
      const array = JSON.stringify(
        [
          {agent_id: 'a', action_type: 'TOOL_CALL', action_name: 'x'},
          {agent_id: 'a', action_type: 'bad type', action_name: 'y'},
        ],
        null,
        2,
      )
      const res = await runCli(['ingest', '-', ...on(dataDir)], {input: array})
      expect(res.code).to.equal(2)
      expect(res.stdout).to.match(/1 accepted, 1 rejected/)
      expect(res.stdout).to.match(/element 1: .*action_type/)
      expect(res.stderr).to.equal(
        'Error: 1 of 2 events rejected (the reasons are in the list above); the 1 accepted are recorded; ' +
          'correct the rejected events and ingest only them again\n',
      )
      // Reasons in input order, whether known while reading (not JSON) or from the store (invalid).
      const mixed =
        '{"agent_id": "a"}\nnot json\n{"agent_id": "a", "action_type": "TOOL_CALL", "action_name": "x"}\n[\n'
      const listed = await runCli(['ingest', '-', ...on(dataDir), '--json'], {input: mixed})
      expect(listed.code).to.equal(2)
      expect(JSON.parse(listed.stdout).rejections.map((r: {where: string}) => r.where)).to.deep.equal([
        'line 1',
        'line 2',
        'line 4',
      ])
      expect(listed.stderr).to.equal(
        'Error: 3 of 4 events rejected (the reasons are in the JSON output); the 1 accepted are recorded; ' +
          'correct the rejected events and ingest only them again\n',
      )
      const none = await runCli(['ingest', '-', ...on(dataDir)], {input: '{"agent_id": "a"}\n{"agent_id": "b"}\n'})
      expect(none.stderr).to.equal(
        'Error: 2 of 2 events rejected (the reasons are in the list above); none was recorded; ' +
          'correct the rejected events and ingest only them again\n',
      )
      const single = await runCli(['ingest', ...on(dataDir), '--json'], {
        input: '{\n "agent_id": "b",\n "action_type": "DECISION",\n "action_name": "z"\n}\n',
      })
      expect(single.code, single.stderr).to.equal(0)
      expect(JSON.parse(single.stdout)).to.include({accepted: 1, rejected: 0})
    })

    it('timestamps the root, lists and verifies it, exports a package that verifies, merkle root agrees', async () => {
      expect((await runCli(['ingest', SAMPLE, ...on(dataDir)])).code).to.equal(0)
      const root = await runCli(['merkle', 'root', '--json', ...on(dataDir)])
      expect(root.code, root.stderr).to.equal(0)
      const tree = JSON.parse(root.stdout)
      expect(tree).to.include({tree_size: 8, algorithm: 'rfc9162-sha256'})
      const ts = await runCli(['timestamp', '--json', ...on(dataDir)])
      expect(ts.code, ts.stderr).to.equal(0)
      expect(JSON.parse(ts.stdout)).to.include({merkle_root: tree.merkle_root, tree_size: 8})
      const listed = await runCli(['timestamps', 'list', '--json', ...on(dataDir)])
      expect(JSON.parse(listed.stdout).map((t: any) => t.merkle_root)).to.deep.equal([tree.merkle_root])
      const verified = await runCli(['timestamps', 'verify', '--json', ...on(dataDir)])
      expect(verified.code, verified.stdout + verified.stderr).to.equal(0)
      expect(JSON.parse(verified.stdout)).to.include({valid: true, consistent: true, merkle_root: tree.merkle_root})
      const file = path.join(dir, 'evidence.atrail.json')
      expect((await runCli(['export', '--agent', 'billing-bot', '-o', file, ...on(dataDir)])).code).to.equal(0)
      const pkg = JSON.parse(await readFile(file, 'utf8'))
      expect(pkg.merkle).to.deep.equal({algorithm: 'rfc9162-sha256', tree_size: 8, root: tree.merkle_root})
      expect(pkg.events).to.have.length(3)
      expect(pkg.timestamp).to.include({merkle_root: tree.merkle_root})
      const ok = await runCli(['verify', '--package', file])
      expect(ok.code, ok.stdout + ok.stderr).to.equal(0)
      expect(ok.stdout).to.match(/valid: 3 events/)
    })
  })
})
