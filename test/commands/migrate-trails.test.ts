import path from 'node:path'
import {expect} from 'chai'
import {runCli} from '../support/cli.js'
import {postgresPerTest, rowsOf} from '../support/stores.js'
import {readTrailFile} from '../../src/store/sqljs/trail-file.js'

const event = (agent: string) => JSON.stringify({agent_id: agent, action_type: 'TOOL_CALL', action_name: 'refund'})

interface Listed {
  name: string
  origin: string
  verifier_key: string
  tree_size: number
  sealed: boolean
}

async function ok(args: string[], input?: string): Promise<string> {
  const run = await runCli(args, input === undefined ? undefined : {input})
  expect(run.code, `${args.join(' ')}: ${run.stderr}`).to.equal(0)
  return run.stdout
}

/** default with two events, payments with one, q4 with two and sealed (with its final checkpoint). */
async function threeTrails(data: string): Promise<void> {
  await ok(['ingest', '-', '--data-dir', data], `${event('a')}\n${event('b')}\n`)
  await ok(['trails', 'create', 'payments', '--data-dir', data])
  await ok(['trails', 'create', 'q4', '--origin', 'audit.example.com/q4', '--data-dir', data])
  await ok(['ingest', '-', '--trail', 'payments', '--data-dir', data], `${event('p')}\n`)
  await ok(['ingest', '-', '--trail', 'q4', '--data-dir', data], `${event('q')}\n${event('r')}\n`)
  await ok(['trails', 'seal', 'q4', '--data-dir', data])
}

async function listed(flags: string[]): Promise<Listed[]> {
  return JSON.parse(await ok(['trails', 'list', '--json', ...flags])) as Listed[]
}

async function rootOf(trail: string, flags: string[]): Promise<unknown> {
  return JSON.parse(await ok(['merkle', 'root', '--json', '--trail', trail, ...flags])).merkle_root
}

describe('the CLI: migrate of a data directory with trails', function () {
  this.timeout(120_000)
  const pg = postgresPerTest()

  it('moves every trail: roots, origins, keys, sizes and seals equal, each verifies, the seal holds', async () => {
    const data = path.join(pg.dir, 'data')
    await threeTrails(data)
    const before = await listed(['--data-dir', data])
    const roots = await Promise.all(before.map((trail) => rootOf(trail.name, ['--data-dir', data])))

    const proof = JSON.parse(await ok(['migrate', '--json', '--data-dir', data, '--database-url', pg.url]))
    expect(proof.trails.map((trail: {trail: string; sealed: boolean}) => [trail.trail, trail.sealed])).to.deep.equal([
      ['default', false],
      ['payments', false],
      ['q4', true],
    ])
    expect(proof.trails[2]).to.deep.include({
      origin: 'audit.example.com/q4',
      events: 2,
      chains_valid: true,
      merkle_root: roots[2],
    })
    expect(proof.trails[2].checkpoint_after_move.witness_accepts).to.equal(true)

    const inDatabase = ['--data-dir', data, '--database-url', pg.url]
    expect(await listed(inDatabase)).to.deep.equal(before)
    expect(before.map((trail) => [trail.name, trail.tree_size, trail.sealed])).to.deep.equal([
      ['default', 2, false],
      ['payments', 1, false],
      ['q4', 2, true],
    ])
    for (const [i, trail] of before.entries()) {
      expect(await rootOf(trail.name, inDatabase)).to.equal(roots[i])
      await ok(['verify', '--trail', trail.name, ...inDatabase])
    }
    // The seal's time and the trail's creation time are the data directory's, not the move's.
    const file = (await readTrailFile(path.join(data, 'trails', 'q4')))!
    const [times] = await rowsOf(
      pg.url,
      `SELECT to_json(t.created_at) #>> '{}' AS created, to_json(s.sealed_at) #>> '{}' AS sealed
       FROM trails t, trail_q4.trail_state s WHERE t.name = 'q4'`,
    )
    expect([Date.parse(times!.created), Date.parse(times!.sealed)]).to.deep.equal([
      Date.parse(file.created_at!),
      Date.parse(file.sealed_at!),
    ])
    const refused = await runCli(['ingest', '-', '--trail', 'q4', ...inDatabase], {input: `${event('late')}\n`})
    expect(refused.code).to.equal(2)
    expect(refused.stderr).to.match(/seal/)
    expect((await listed(inDatabase)).find((trail) => trail.name === 'q4')!.tree_size).to.equal(2)
  })

  it('--trail moves that trail alone; a later --trail adds another', async () => {
    const data = path.join(pg.dir, 'data')
    await threeTrails(data)
    const before = await listed(['--data-dir', data])
    const inDatabase = ['--data-dir', data, '--database-url', pg.url]

    const proof = JSON.parse(await ok(['migrate', '--json', '--trail', 'payments', ...inDatabase]))
    expect(proof.trails.map((trail: {trail: string}) => trail.trail)).to.deep.equal(['payments'])
    expect(proof).to.include({trail: 'payments', events: 1})
    let after = await listed(inDatabase)
    expect(after.map((trail) => [trail.name, trail.tree_size])).to.deep.equal([
      ['default', 0],
      ['payments', 1],
    ])
    expect(after[1]).to.deep.equal(before[1])

    // AUDIT_TRAIL_TRAIL names the trail as --trail does.
    const byEnv = await runCli(['migrate', ...inDatabase], {env: {AUDIT_TRAIL_TRAIL: 'q4'}})
    expect(byEnv.code, byEnv.stderr).to.equal(0)
    after = await listed(inDatabase)
    expect(after.map((trail) => trail.name)).to.deep.equal(['default', 'payments', 'q4'])
    expect(after[2]).to.deep.equal(before[2])
    await ok(['verify', '--trail', 'q4', ...inDatabase])

    const unknown = await runCli(['migrate', '--trail', 'nope', ...inDatabase])
    expect(unknown.code).to.equal(2)
    expect(unknown.stderr).to.include('no trail named nope in the data directory')
  })

  it('refuses a database holding a trail of that name with other content, and moves nothing', async () => {
    const data = path.join(pg.dir, 'data')
    await threeTrails(data)
    const payments = (await listed(['--data-dir', data])).find((trail) => trail.name === 'payments')!
    const service = ['--data-dir', path.join(pg.dir, 'other'), '--database-url', pg.url]
    await ok(['trails', 'create', 'payments', '--origin', payments.origin, ...service])
    await ok(['ingest', '-', '--trail', 'payments', ...service], `${event('stranger')}\n`)

    // An empty trail of that name and origin is refused too when it has a log key of its own.
    await ok(['trails', 'create', 'q4', '--origin', 'audit.example.com/q4', ...service])
    const keyed = await runCli(['migrate', '--trail', 'q4', '--data-dir', data, '--database-url', pg.url])
    expect(keyed.code).to.equal(2)
    expect(keyed.stderr).to.include('the database already holds a trail q4 with another log key')

    const moved = await runCli(['migrate', '--data-dir', data, '--database-url', pg.url])
    expect(moved.code).to.equal(2)
    expect(moved.stderr).to.include('the database already holds a trail payments with 1 event')
    const after = await listed(['--data-dir', data, '--database-url', pg.url])
    expect(after.map((trail) => [trail.name, trail.tree_size])).to.deep.equal([
      ['default', 0],
      ['payments', 1],
      ['q4', 0],
    ])
  })

  it('moves a sealed default sealed', async () => {
    const data = path.join(pg.dir, 'data')
    await ok(['ingest', '-', '--data-dir', data], `${event('a')}\n`)
    await ok(['trails', 'seal', 'default', '--data-dir', data])
    await ok(['migrate', '--data-dir', data, '--database-url', pg.url])
    const [trail] = await listed(['--data-dir', data, '--database-url', pg.url])
    expect(trail).to.include({name: 'default', tree_size: 1, sealed: true})
  })
})
