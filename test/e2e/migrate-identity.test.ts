import {mkdir} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {cosignatureVerifier} from '../../src/core/checkpoint/index.js'
import {ed25519NoteVerifier, openNote} from '../../src/core/note/index.js'
import {runCli, startServe, startWitness} from '../support/cli.js'
import {createTestDatabase, postgresPerTest} from '../support/stores.js'

type Server = Awaited<ReturnType<typeof startServe>>
type WitnessProcess = Awaited<ReturnType<typeof startWitness>>

const ORIGIN = 'log.test/moved'
const WITNESS = 'witness.test/moved'

const event = (n: number) => ({agent_id: `agent-${n % 2}`, action_type: 'TOOL_CALL', action_name: `step_${n}`})

async function post(url: string, body: unknown): Promise<Response> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(body),
  })
  expect(response.status, url).to.be.oneOf([200, 201])
  return response
}

/** The served checkpoint once it has `size` leaves and the witness's cosignature (both come in the background). */
async function cosignedCheckpoint(server: Server, size: number): Promise<string> {
  let note = ''
  for (let i = 0; i < 600; i++) {
    note = await (await fetch(`${server.url}/tlog/checkpoint`)).text()
    if (note.split('\n')[1] === String(size) && note.includes(`— ${WITNESS} `)) return note
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no checkpoint of size ${size} cosigned by the witness; the last served was:\n${note}`)
}

/**
 * Issue 36, second reproduction: a data directory with timestamps and witnessed checkpoints moved
 * into PostgreSQL stays the same log: its tokens verify without the old directory, its key and
 * origin are the same, and the witness that cosigned before the move cosigns after it.
 */
describe('migrate keeps the log: TSA, log key and origin, witnessed history', function () {
  this.timeout(300_000)
  const running: Array<Server | WitnessProcess> = []
  const fresh = postgresPerTest(async () => {
    await Promise.all(running.splice(0).map((process) => process.stop()))
  })

  it('verifies timestamps and packages with the old key after the move, and the same witness cosigns on', async () => {
    const dataDir = path.join(fresh.dir, 'data')
    const elsewhere = path.join(fresh.dir, 'elsewhere')
    await mkdir(elsewhere)
    await mkdir(dataDir)
    const logKey = (await runCli(['keys', 'log', '--data-dir', dataDir, '--origin', ORIGIN])).stdout.trim()
    const witness = await startWitness([
      '--dir',
      path.join(fresh.dir, 'witness'),
      '--name',
      WITNESS,
      '--log',
      `${ORIGIN}=${logKey}`,
    ])
    running.push(witness)
    const witnessFlags = ['--witness', witness.url, '--witness-key', witness.key]

    // Before the move: served from the data directory, timestamped, cosigned at size 3.
    const before = await startServe(['--data-dir', dataDir, '--origin', ORIGIN, ...witnessFlags])
    running.push(before)
    await post(`${before.url}/v1/batch`, [0, 1, 2].map(event))
    await post(`${before.url}/v1/timestamp`, {})
    await cosignedCheckpoint(before, 3)
    await before.stop()
    running.splice(running.indexOf(before), 1)
    expect(before.output()).to.contain('SIGTERM received, finishing requests and writing a snapshot\n')
    // One more event recorded offline: the first checkpoint after the move covers it.
    const offline = await runCli(['ingest', '-', '--data-dir', dataDir], {input: JSON.stringify(event(3))})
    expect(offline.code, offline.stderr).to.equal(0)
    // The log's name is the one it signed under, without --origin.
    expect((await runCli(['keys', 'log', '--data-dir', dataDir])).stdout.trim()).to.equal(logKey)

    const migrated = await runCli(['migrate', '--json', '--data-dir', dataDir, '--database-url', fresh.url])
    expect(migrated.code, migrated.stderr).to.equal(0)
    expect(JSON.parse(migrated.stdout)).to.deep.include({
      events: 4,
      timestamps: 1,
      identity: {embedded_tsa: true, external_tsa_certificates: 0, log_key: logKey},
      latest_timestamp: {tree_size: 3, valid: true, consistent: true},
      latest_checkpoint: {tree_size: 3, origin: ORIGIN, valid: true},
      checkpoint_after_move: {tree_size: 4, witness_accepts: true},
    })

    // After the move, from a folder without the old data directory.
    const env = {AUDIT_TRAIL_DATABASE_URL: fresh.url}
    const verified = await runCli(['timestamps', 'verify', '--json'], {cwd: elsewhere, env})
    expect(verified.code, verified.stdout + verified.stderr).to.equal(0)
    expect(JSON.parse(verified.stdout)).to.include({valid: true, consistent: true, tree_size: 3})
    expect((await runCli(['keys', 'log'], {cwd: elsewhere, env})).stdout.trim()).to.equal(logKey)

    const after = await startServe(['--database-url', fresh.url, ...witnessFlags], {cwd: elsewhere})
    running.push(after)
    for (let i = 0; i < 100 && !after.output().includes('log key: '); i++) await new Promise((r) => setTimeout(r, 50))
    expect(after.output()).to.contain(`log key: ${logKey}\n`)
    await post(`${after.url}/v1/batch`, [4, 5].map(event))
    const note = await cosignedCheckpoint(after, 6)
    const opened = openNote(note, [ed25519NoteVerifier(logKey), cosignatureVerifier(witness.key)])
    expect(opened.verified.map((signature) => signature.name)).to.deep.equal([ORIGIN, WITNESS])

    const pkg = path.join(elsewhere, 'evidence.atrail.json')
    expect((await runCli(['export', '-o', pkg], {cwd: elsewhere, env})).code).to.equal(0)
    const checked = await runCli(
      ['verify', '--package', pkg, '--log-key', logKey, '--witness-key', witness.key, '--min-witnesses', '1'],
      {cwd: elsewhere},
    )
    expect(checked.code, checked.stdout + checked.stderr).to.equal(0)
  })

  it("refuses, in one sentence and changing nothing, a database that holds another log's key", async () => {
    const dataDir = path.join(fresh.dir, 'data')
    await mkdir(dataDir)
    expect((await runCli(['keys', 'log', '--data-dir', dataDir])).code).to.equal(0)
    expect((await runCli(['ingest', '-', '--data-dir', dataDir], {input: JSON.stringify(event(0))})).code).to.equal(0)
    // Another log's key, made in the database by a first command on it.
    const other = await createTestDatabase()
    try {
      const theirs = (await runCli(['keys', 'log', '--database-url', other.url])).stdout.trim()
      const refused = await runCli(['migrate', '--data-dir', dataDir, '--database-url', other.url])
      expect(refused.code, refused.stderr).to.equal(2)
      expect(refused.stderr).to.equal(
        "Error: the database already holds another log key than the data directory's, so it belongs to another " +
          'log: migrate into a new database (createdb) and give its URL with --database-url\n',
      )
      const stats = JSON.parse((await runCli(['stats', '--json', '--database-url', other.url])).stdout)
      expect(stats.total_events).to.equal(0)
      expect((await runCli(['keys', 'log', '--database-url', other.url])).stdout.trim()).to.equal(theirs)
      // The same data directory goes into an unused database.
      expect((await runCli(['migrate', '--data-dir', dataDir, '--database-url', fresh.url])).code).to.equal(0)
    } finally {
      await other.drop()
    }
  })
})
