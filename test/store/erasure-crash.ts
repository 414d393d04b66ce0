/**
 * kill -9 at random moments of an erasure (docs/erasure.md, crash safety), shared by the main suite
 * (a few rounds over thousands of events) and the reliability suite (100,000 events): the log is
 * seeded once, each round erases a fresh copy of it in a child process killed at a random moment.
 * Right after the kill no stored event is half erased (a value without its salt, a value gone but
 * not marked, or marked but present); after the next opening the erasure is complete when its event
 * was recorded and absent otherwise, every chain verifies, and the data directory holds no marker.
 */
import {spawn} from 'node:child_process'
import {cpSync, mkdirSync, readdirSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect} from 'chai'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'
import {newMarker} from '../support/markers.js'
import {createTestDatabase, rowsOf, TEST_DATABASE_URL} from '../support/stores.js'

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'erase-child.ts')

export interface CrashPlan {
  rounds: number
  /** Events labelled customer=c-1, which the erasure covers, and others it leaves alone. */
  covered: number
  others: number
  store: 'sqljs' | 'postgres'
}

/** One stored event's state for the check: each committed member held (value and salt) or erased (marked). */
interface MemberState {
  id: string
  member: string
  value: boolean
  salt: boolean
  marked: boolean
}

async function seed(services: AuditServices, plan: CrashPlan, marker: string): Promise<void> {
  const total = plan.covered + plan.others
  const every = Math.max(1, Math.round(total / Math.max(1, plan.others)))
  let others = 0
  for (let from = 0; from < total; from += 1000) {
    const events = Array.from({length: Math.min(1000, total - from)}, (_, i) => {
      const other = others < plan.others && (from + i) % every === every - 1
      if (other) others++
      return makeEvent({
        agent_id: `agent-${(from + i) % 7}`,
        labels: {customer: other ? 'c-2' : 'c-1'},
        input: {prompt: `${other ? 'kept' : marker} ${from + i}`},
        output: 'answer',
      })
    })
    await services.ingest.recordBatch(events)
  }
}

/** Runs the child; kills it `killAfterMs` after it says `erasing` (never when undefined); the ms until `erased`. */
function runChild(dataDir: string, databaseUrl: string | undefined, killAfterMs?: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, databaseUrl ?? ''], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let started = 0
    let ended = 0
    child.stdout.on('data', (data) => {
      out += data
      if (started === 0 && out.includes('erasing\n')) {
        started = performance.now()
        if (killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs)
      }
      if (ended === 0 && out.includes('erased ')) ended = performance.now()
    })
    child.stderr.on('data', (data) => (out += data))
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0) resolve((ended || performance.now()) - started)
      else reject(new Error(`the erasing child exited with ${code}: ${out}`))
    })
  })
}

/** What the store holds right after the kill, read behind the service's back. */
async function membersAsStored(dataDir: string, databaseUrl: string | undefined): Promise<MemberState[]> {
  const rows: MemberState[] = []
  const members = ['input', 'output']
  // salts and commitments are stored as a byte naming the members (bit 1 input, 2 output) and their
  // 32 bytes each (src/store/digests.ts).
  const bit = (m: string) => members.indexOf(m) + 1
  if (databaseUrl === undefined) {
    const {execFileSync} = await import('node:child_process')
    const file = path.join(dataDir, 'events.sqlite')
    const has = (column: string, m: string) =>
      `coalesce((instr('123456789ABCDEF', substr(hex(${column}), 2, 1)) & ${bit(m)}) <> 0 AND ${column} IS NOT NULL, 0)`
    const select = members
      .map(
        (m) => `SELECT id, '${m}' AS member, ${m} IS NOT NULL AS value, ${has('salts', m)} AS salt,
        json_extract(erased, '$.${m}') IS NOT NULL AS marked FROM events WHERE commitments IS NOT NULL
        AND ${has('commitments', m)}`,
      )
      .join(' UNION ALL ')
    const text = execFileSync('sqlite3', ['-json', file, select], {maxBuffer: 512 * 1024 * 1024}).toString()
    for (const row of text.trim() === '' ? [] : (JSON.parse(text) as Record<string, unknown>[])) {
      rows.push({
        id: row.id as string,
        member: row.member as string,
        value: !!row.value,
        salt: !!row.salt,
        marked: !!row.marked,
      })
    }
    return rows
  }
  for (const m of members)
    rows.push(
      ...(await rowsOf<MemberState>(
        databaseUrl,
        `SELECT id, '${m}' AS member, ${m} IS NOT NULL AS value,
         coalesce(get_byte(salts, 0) & ${bit(m)} <> 0, false) AS salt, coalesce(erased ? '${m}', false) AS marked
         FROM events WHERE get_byte(commitments, 0) & ${bit(m)} <> 0`,
      )),
    )
  return rows
}

function filesHolding(dir: string, text: string): string[] {
  const needle = Buffer.from(text)
  return readdirSync(dir, {recursive: true, encoding: 'utf8'})
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile() && readFileSync(file).includes(needle))
}

async function admin(sql: string): Promise<void> {
  await rowsOf(TEST_DATABASE_URL, sql)
}

/** The rounds of one plan; resolves with the kill moments used, for the test's title to report. */
export async function killDuringErasures(plan: CrashPlan): Promise<void> {
  const root = await tempDir()
  const seeded = path.join(root, 'seeded')
  const marker = newMarker()
  const template = plan.store === 'postgres' ? await createTestDatabase() : undefined
  const databases: Array<{drop(): Promise<void>}> = []
  try {
    const services = await openAudit({dataDir: seeded, databaseUrl: template?.url})
    await seed(services, plan, marker)
    await services.close()
    let duration = 0
    for (let round = 0; round <= plan.rounds; round++) {
      const dataDir = path.join(root, `round-${round}`)
      if (template === undefined) cpSync(seeded, dataDir, {recursive: true})
      else mkdirSync(dataDir)
      let databaseUrl: string | undefined
      if (template !== undefined) {
        const name = `${new URL(template.url).pathname.slice(1)}_r${round}`
        await admin(`CREATE DATABASE ${name} TEMPLATE ${new URL(template.url).pathname.slice(1)}`)
        databases.push({drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)})
        const url = new URL(template.url)
        url.pathname = `/${name}`
        databaseUrl = url.toString()
      }
      // Round 0 runs to the end and times the erasure; the others are killed somewhere inside it.
      const killAfter = round === 0 ? undefined : Math.random() * duration * 1.1
      const took = await runChild(dataDir, databaseUrl, killAfter)
      if (round === 0) duration = took
      const stored = await membersAsStored(dataDir, databaseUrl)
      if (process.env.ERASURE_CRASH_DEBUG) {
        const marked = stored.filter((s) => s.marked).length
        console.log(`round ${round}: killed at ${killAfter?.toFixed(0)} of ${duration.toFixed(0)} ms, ${marked} marked`)
      }
      const halfErased = stored.filter((s) => !((s.value && s.salt && !s.marked) || (!s.value && !s.salt && s.marked)))
      expect(halfErased.slice(0, 3), `round ${round}: killed ${killAfter?.toFixed(0)} ms in`).to.deep.equal([])
      const reopened = await openAudit({dataDir, databaseUrl})
      try {
        const erasures = await reopened.query.listEvents({agent_id: 'audit-trail:erasures'})
        expect(erasures.total).to.be.at.most(1)
        if (process.env.ERASURE_CRASH_DEBUG) console.log(`  after reopening: ${erasures.total} erasure event`)
        const after = await membersAsStored(dataDir, databaseUrl)
        const covered = new Set(
          (await reopened.query.search({q: marker, limit: '1000'})).results.map((event) => event.id),
        )
        if (erasures.total === 1) {
          expect(covered.size, `round ${round}: the erasure was completed`).to.equal(0)
          expect(after.filter((s) => s.marked).length).to.equal(plan.covered * 2)
        } else {
          expect(after.filter((s) => s.marked).length, `round ${round}: nothing was erased`).to.equal(0)
        }
        expect(await reopened.integrity.verifyAll()).to.include({valid: true})
      } finally {
        await reopened.close()
      }
      if (databaseUrl === undefined && (await erasureRecorded(dataDir))) {
        expect(filesHolding(dataDir, marker), `round ${round}`).to.deep.equal([])
      }
      await removeDir(dataDir)
    }
  } finally {
    for (const database of databases) await database.drop().catch(() => undefined)
    await template?.drop()
    await removeDir(root)
  }
}

async function erasureRecorded(dataDir: string): Promise<boolean> {
  const services = await openAudit({dataDir})
  try {
    return (await services.query.listEvents({agent_id: 'audit-trail:erasures'})).total === 1
  } finally {
    await services.close()
  }
}
