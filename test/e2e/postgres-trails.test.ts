/**
 * Two trails on two PostgreSQL databases (docs/trails.md): `default` in the service's database and
 * `payments` in a database of its own (`in_database`), written concurrently through two real serve
 * processes. Each trail is one gap-free log of its own, every process sees the same, and the two
 * roots are independent: each covers its own trail's events only.
 */
import {expect} from 'chai'
import pg from 'pg'
import {runCli, startServe} from '../support/cli.js'
import {createTestDatabase, postgresPerTest} from '../support/stores.js'

type Server = Awaited<ReturnType<typeof startServe>>

async function call(url: string, method: string, path: string, body?: unknown): Promise<{status: number; body: any}> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {'content-type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return {status: response.status, body: await response.json()}
}

const event = (agent: string, n: number) => ({agent_id: agent, action_type: 'TOOL_CALL', action_name: `step_${n}`})

/** The events tables in a database, each with its row count. */
async function eventTables(url: string): Promise<Array<{schema: string; rows: number}>> {
  const client = new pg.Client({connectionString: url})
  await client.connect()
  try {
    const {rows} = await client.query<{table_schema: string}>(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'events' ORDER BY 1",
    )
    const counted = []
    for (const {table_schema: schema} of rows) {
      const count = await client.query<{n: string}>(`SELECT count(*) AS n FROM "${schema}".events`)
      counted.push({schema, rows: Number(count.rows[0]!.n)})
    }
    return counted
  } finally {
    await client.end()
  }
}

describe('two trails on two PostgreSQL databases, two serve processes', function () {
  this.timeout(120_000)
  let servers: Server[] = []
  let other: {url: string; drop(): Promise<void>} | undefined
  const fresh = postgresPerTest(async () => {
    await Promise.all(servers.map((server) => server.stop().catch(() => undefined)))
    servers = []
    await other?.drop()
    other = undefined
  })

  it('keeps each trail gap-free with a root of its own while both processes write both trails', async () => {
    other = await createTestDatabase({empty: true})
    for (let i = 0; i < 2; i++) servers.push(await startServe(['--data-dir', fresh.dir, '--database-url', fresh.url]))
    // Made by the CLI on the service database while both processes serve: each finds it there.
    const created = await runCli([
      'trails',
      'create',
      'payments',
      '--database-url',
      fresh.url,
      '--in-database',
      other.url,
    ])
    expect(created.code, created.stderr).to.equal(0)

    const work: Promise<{status: number; body: any}>[] = []
    for (let round = 0; round < 12; round++) {
      for (const [p, server] of servers.entries()) {
        work.push(call(server.url, 'POST', '/v1/events', event(`default-${p}`, round)))
        work.push(call(server.url, 'POST', '/v1/trails/payments/events', event(`payments-${p}`, round)))
        work.push(
          call(server.url, 'POST', '/v1/trails/payments/batch', [event('payments-batch', round), event('x', round)]),
        )
      }
    }
    const answers = await Promise.all(work)
    expect(answers.filter((a) => a.status !== 201).map((a) => a.body)).to.deep.equal([])

    const expected = {'': 24, '/trails/payments': 72}
    const roots: string[] = []
    for (const [prefix, count] of Object.entries(expected)) {
      const views = await Promise.all(
        servers.map(async (server) => ({
          events: (await call(server.url, 'GET', `/v1${prefix}/events?limit=1000`)).body,
          root: (await call(server.url, 'GET', `/v1${prefix}/merkle/root`)).body,
          verify: (await call(server.url, 'GET', `/v1${prefix}/verify`)).body,
        })),
      )
      for (const view of views) {
        expect(view.events.map((e: {index: number}) => e.index)).to.deep.equal([...Array(count).keys()])
        expect(view.root.tree_size).to.equal(count)
        expect(view.verify.valid).to.equal(true)
      }
      expect(views[1]!.root.merkle_root).to.equal(views[0]!.root.merkle_root)
      expect(views[1]!.events).to.deep.equal(views[0]!.events)
      roots.push(views[0]!.root.merkle_root)
    }
    expect(roots[0]).to.not.equal(roots[1])

    // The trail's events are in its own database, not in the service's.
    expect((await eventTables(other.url)).map((t) => t.rows)).to.deep.equal([72])
    expect((await eventTables(fresh.url)).map((t) => t.rows)).to.deep.equal([24])

    // The CLI on the service's database finds the trail where it lives, and its log verifies.
    const verified = await runCli(['verify', '--database-url', fresh.url, '--trail', 'payments', '--json'])
    expect(verified.code, verified.stderr).to.equal(0)
  })
})
