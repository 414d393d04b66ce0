/**
 * PostgreSQL restarted and stopped under ingest (docs/postgres.md, Faults). The test runs its own
 * cluster (Debian's pg_createcluster), never the shared one: it restarts it. Without Debian's
 * tools or root it is skipped, saying why.
 */
import {execFile} from 'node:child_process'
import {randomBytes, randomUUID} from 'node:crypto'
import {existsSync, readdirSync} from 'node:fs'
import {freePort} from '../support/ports.js'
import {promisify} from 'node:util'
import {expect} from 'chai'
import {startServe} from '../support/cli.js'
import {mkdtemp, rm} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

const run = promisify(execFile)
const POSTGRESQL = '/usr/lib/postgresql'

/** Why the test cannot run here, or undefined when it can. */
function unavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'it creates a PostgreSQL cluster of its own, which needs root'
  if (!existsSync('/usr/bin/pg_createcluster') || !existsSync(POSTGRESQL)) {
    return "Debian's postgresql-common tools are not installed"
  }
  return undefined
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const event = (agent: string, n: number) => ({
  id: randomUUID(),
  agent_id: agent,
  action_type: 'TOOL_CALL',
  action_name: `step_${n}`,
})

describe('PostgreSQL restarted during ingest', function () {
  this.timeout(180_000)
  const cluster = `atrail_restart_${randomBytes(4).toString('hex')}`
  let version = ''
  let created = false
  let dir = ''
  let server: Awaited<ReturnType<typeof startServe>> | undefined
  let url = ''

  const ctl = (action: string, ...args: string[]) =>
    run('pg_ctlcluster', ['--skip-systemctl-redirect', version, cluster, action, ...args])

  before(async function () {
    const why = unavailable()
    if (why !== undefined) {
      console.log(`    skipped: ${why}`)
      this.skip()
    }
    version = readdirSync(POSTGRESQL)
      .sort((a, b) => Number(a) - Number(b))
      .at(-1)!
    const port = await freePort()
    const trust = ['--auth-host=trust', '--auth-local=trust']
    await run('pg_createcluster', [version, cluster, '-p', String(port), '--', ...trust])
    created = true
    await ctl('start')
    url = `postgres://postgres@127.0.0.1:${port}/postgres`
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-restart-'))
  })

  after(async () => {
    await server?.stop().catch(() => undefined)
    if (created) await run('pg_dropcluster', ['--stop', version, cluster]).catch(() => undefined)
    if (dir !== '') await rm(dir, {recursive: true, force: true})
  })

  it('answers 201 or 503, /healthz 503 while down, reconnects, and loses or repeats nothing', async () => {
    server = await startServe(['--data-dir', dir, '--database-url', url])
    const base = server.url
    const acknowledged = new Map<string, number>()
    const unexpected: string[] = []
    let unavailableAnswers = 0
    let stop = false

    // A client that retries with the same ids after a 503 (the commit may have happened).
    const writer = async (agent: string, batch: boolean) => {
      let pending: ReturnType<typeof event>[] | undefined
      for (let n = 0; !stop || pending !== undefined; n++) {
        const body = pending ?? (batch ? [event(agent, n), event(agent, n + 0.5)] : [event(agent, n)])
        let response: Response
        let answer: any
        try {
          response = await fetch(`${base}${batch ? '/v1/batch' : '/v1/events'}`, {
            method: 'POST',
            headers: {'content-type': 'application/json'},
            body: JSON.stringify(batch ? body : body[0]),
          })
          answer = await response.json()
        } catch (error) {
          unexpected.push(`${(error as Error).message}: ${server!.output()}`)
          return
        }
        if (response.status === 503 && answer.error?.code === 'storage_unavailable') {
          unavailableAnswers++
          pending = body
          await sleep(50)
          continue
        }
        if (response.status !== 201 && response.status !== 200) {
          unexpected.push(`${response.status} ${JSON.stringify(answer)}`)
          pending = undefined
          continue
        }
        pending = undefined
        for (const stored of batch ? answer.map((r: {event: {id: string; index: number}}) => r.event) : [answer]) {
          acknowledged.set(stored.id, stored.index)
        }
      }
    }
    const waitFor = async (count: number) => {
      while (acknowledged.size < count && unexpected.length === 0) await sleep(20)
      expect(unexpected.join('\n')).to.equal('')
    }
    const health = async () => (await fetch(`${base}/healthz`)).status

    const writers = [
      writer('single-a', false),
      writer('single-b', false),
      writer('batch-a', true),
      writer('batch-b', true),
    ]
    await waitFor(100)
    await ctl('restart', '-m', 'fast')
    await waitFor(acknowledged.size + 100)

    await ctl('stop', '-m', 'fast')
    const healthWhileDown = await health()
    await sleep(500)
    await ctl('start')
    let healthAfter = 0
    for (let tries = 0; tries < 100 && healthAfter !== 200; tries++) {
      healthAfter = await health()
      if (healthAfter !== 200) await sleep(100)
    }
    await waitFor(acknowledged.size + 100)
    stop = true
    await Promise.all(writers)

    expect(unexpected).to.deep.equal([])
    expect(healthWhileDown).to.equal(503)
    expect(healthAfter).to.equal(200)
    expect(unavailableAnswers, 'requests answered 503 while the database was down').to.be.greaterThan(0)

    const stats = await (await fetch(`${base}/v1/stats`)).json()
    const stored: {id: string; index: number}[] = []
    for (let offset = 0; offset < stats.total_events; offset += 1000) {
      stored.push(...(await (await fetch(`${base}/v1/events?limit=1000&offset=${offset}`)).json()))
    }
    expect(stored.map((e) => e.index)).to.deep.equal(Array.from({length: stats.total_events}, (_, i) => i))
    const storedIndex = new Map(stored.map((e) => [e.id, e.index]))
    expect(storedIndex.size, 'each id stored once').to.equal(stored.length)
    for (const [id, index] of acknowledged) expect(storedIndex.get(id), id).to.equal(index)
    // A retried 503 that had in fact committed is answered 200, not stored again: every stored
    // id was acknowledged.
    expect(stored.length).to.equal(acknowledged.size)
    const verified = await (await fetch(`${base}/v1/verify`)).json()
    expect(verified.valid, JSON.stringify(verified)).to.equal(true)
    expect(verified.agents_checked).to.equal(4)
  })
})
