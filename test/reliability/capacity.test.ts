/**
 * The embedded store's limits (issue 19): ingest over HTTP up to the enforced capacity (set low
 * through AUDIT_TRAIL_STORE_CAPACITY so the run reaches it quickly), refusal with 507, stop,
 * reopen, every acknowledged event present; and a data directory whose snapshot is over 2 GiB
 * (padded through the sqlite3 CLI) opens again. Both are slow and memory-hungry, hence here.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import * as fs from 'node:fs'
import path from 'node:path'
import {startServe} from '../support/cli.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'
import {openAudit} from '../../src/services/audit.js'
import {CAPACITY_ENV} from '../../src/store/sqljs/capacity.js'

async function allIds(url: string): Promise<string[]> {
  const ids: string[] = []
  for (let offset = 0; ; offset += 1000) {
    const page = (await (await fetch(`${url}/v1/events?limit=1000&offset=${offset}`)).json()) as Array<{id: string}>
    ids.push(...page.map((e) => e.id))
    if (page.length < 1000) return ids
  }
}

describe('the embedded store at its limits', function () {
  this.timeout(600_000)

  it('ingests to the enforced capacity, refuses with 507, and keeps every acknowledged event', async () => {
    const dir = await tempDir()
    const dataDir = path.join(dir, 'data')
    const acked = new Set<string>()
    process.env[CAPACITY_ENV] = '4MiB'
    try {
      const server = await startServe(['--data-dir', dataDir])
      let refused: {status: number; body: {error: {code: string; message: string}}} | undefined
      const worker = async (n: number) => {
        while (refused === undefined) {
          const body = JSON.stringify(
            Array.from({length: 50}, () => makeEvent({agent_id: `cap-${n}`, input: {text: 'z'.repeat(300)}})),
          )
          const res = await fetch(`${server.url}/v1/batch`, {
            method: 'POST',
            headers: {'content-type': 'application/json'},
            body,
          })
          if (res.status === 201)
            for (const r of (await res.json()) as Array<{event: {id: string}}>) acked.add(r.event.id)
          else refused = {status: res.status, body: (await res.json()) as {error: {code: string; message: string}}}
        }
      }
      await Promise.all([0, 1, 2, 3].map(worker))
      expect(refused!.status).to.equal(507)
      expect(refused!.body.error.code).to.equal('storage_full')
      const health = (await (await fetch(`${server.url}/healthz`)).json()) as {status: string; storage: {state: string}}
      expect(health.status).to.equal('ok')
      expect(health.storage.state).to.be.oneOf(['warning', 'full'])
      expect(await server.stop()).to.equal(0)
      expect(server.output()).to.match(/warning: the embedded store holds/)
      expect(acked.size).to.be.greaterThan(1000)

      const again = await startServe(['--data-dir', dataDir])
      try {
        const stored = new Set(await allIds(again.url))
        expect(
          [...acked].filter((id) => !stored.has(id)),
          'acknowledged events lost',
        ).to.deep.equal([])
        expect(stored.size).to.equal(acked.size)
        const verify = (await (await fetch(`${again.url}/v1/verify`)).json()) as {valid: boolean}
        expect(verify.valid).to.equal(true)
        // Concurrent batches were refused as one group commit; one at a time, the last bytes below
        // the limit may still take a batch or two before it refuses again.
        let status = 0
        for (let tries = 0; tries < 10 && status !== 507; tries++) {
          const body = JSON.stringify(Array.from({length: 50}, () => makeEvent({input: {text: 'z'.repeat(300)}})))
          const more = await fetch(`${again.url}/v1/batch`, {
            method: 'POST',
            headers: {'content-type': 'application/json'},
            body,
          })
          status = more.status
          expect(status).to.be.oneOf([201, 507])
        }
        expect(status).to.equal(507)
      } finally {
        await again.stop()
      }
    } finally {
      delete process.env[CAPACITY_ENV]
      await removeDir(dir)
    }
  })

  it('opens a data directory whose events.sqlite is over 2 GiB', async () => {
    const dir = await tempDir()
    try {
      const first = await openAudit({dataDir: dir})
      const result = await first.ingest.recordBatch(Array.from({length: 20}, () => makeEvent()))
      expect(result.status).to.equal(201)
      const {merkle_root, tree_size} = await first.integrity.merkleRoot()
      await first.close()
      // 2 GiB + 64 MiB of zero blobs beside the events: past fs.readFileSync's limit.
      const pad =
        'CREATE TABLE padding (b BLOB); INSERT INTO padding SELECT zeroblob(1048576) FROM generate_series(1, 2112);'
      const cli = spawnSync('sqlite3', [path.join(dir, 'events.sqlite'), pad], {encoding: 'utf8'})
      expect(cli.stderr).to.equal('')
      expect(fs.statSync(path.join(dir, 'events.sqlite')).size).to.be.greaterThan(2 ** 31)
      const reopened = await openAudit({dataDir: dir, store: {warn: () => undefined}})
      try {
        expect(await reopened.integrity.merkleRoot()).to.include({merkle_root, tree_size})
        expect((await reopened.integrity.verifyAll()).valid).to.equal(true)
        // Over the default capacity (2 GiB): it opens, and refuses to grow.
        const refused = await reopened.ingest.recordOne(makeEvent()).catch((error: unknown) => error)
        expect(refused).to.have.property('code', 'storage_full')
      } finally {
        await reopened.close()
      }
    } finally {
      await removeDir(dir)
    }
  })
})
