/**
 * Payload retention (docs/erasure.md): on PostgreSQL several processes share the log, and one of
 * them takes each period's turn; `serve --payload-retention` runs it and refuses a bad duration.
 */
import {expect} from 'chai'
import path from 'node:path'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {PayloadRetention} from '../../src/services/retention.js'
import {runCli, startServe} from '../support/cli.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'
import {newMarker} from '../support/markers.js'
import {postgresPerTest} from '../support/stores.js'

const DAY = 86_400_000

describe('payload retention', function () {
  this.timeout(60_000)

  describe('on PostgreSQL with several processes', () => {
    const opened: AuditServices[] = []
    const current = postgresPerTest(async () => {
      for (const services of opened.splice(0)) await services.close()
    })

    it('erases once per period, whichever process runs first', async () => {
      const processes = [0, 1, 2].map(() => openAudit({dataDir: current.dir, databaseUrl: current.url}))
      opened.push(...(await Promise.all(processes)))
      await opened[0]!.ingest.recordBatch([makeEvent({input: newMarker()}), makeEvent({output: 'o'})])
      // A full page is kept in each process's page cache (services/page-cache.ts) from now on.
      for (const services of opened) await services.query.listEvents({agent_id: 'agent-1', limit: '2'})
      const later = new Date(Date.now() + 2 * DAY)
      const runs = opened.map((services) =>
        new PayloadRetention({store: services.store, erasure: services.erasure, retentionMs: DAY, log: () => {}}).run(
          later,
        ),
      )
      const results = await Promise.all(runs)
      expect(results.filter((result) => result !== undefined)).to.have.length(1)
      const erasures = await opened[1]!.query.listEvents({agent_id: 'audit-trail:erasures'})
      expect(erasures.total).to.equal(1)
      expect(erasures.events[0]!.action_name).to.equal('payload.retention')
      expect(erasures.events[0]!.metadata).to.deep.include({count: 2})
      // Every process answers without the payload: the others' caches are told (LISTEN/NOTIFY).
      for (const services of opened) {
        const deadline = Date.now() + 2000
        let page = await services.query.listEvents({agent_id: 'agent-1', limit: '2'})
        while (page.events.some((event) => event.salts !== undefined) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20))
          page = await services.query.listEvents({agent_id: 'agent-1', limit: '2'})
        }
        for (const event of page.events) expect(event).to.not.have.any.keys('input', 'output', 'salts')
      }
    })
  })

  it('serve --payload-retention erases what is older when it starts, and refuses a bad duration', async () => {
    const dir = await tempDir()
    const dataDir = path.join(dir, 'data')
    try {
      const bad = await runCli(['serve', '--payload-retention', '400days', '--data-dir', dataDir, '--port', '0'])
      expect(bad.code).to.equal(2)
      expect(bad.stderr).to.match(/--payload-retention 400days/)
      const marker = newMarker()
      const line = JSON.stringify(makeEvent({input: {q: marker}}))
      expect((await runCli(['ingest', '-', '--data-dir', dataDir], {input: line})).code).to.equal(0)
      await new Promise((resolve) => setTimeout(resolve, 1100))
      const server = await startServe(['--data-dir', dataDir, '--payload-retention', '1s'])
      try {
        const deadline = Date.now() + 10_000
        let text = ''
        while (Date.now() < deadline) {
          text = await (await fetch(`${server.url}/v1/events?agent_id=agent-1`)).text()
          if (!text.includes(marker)) break
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        expect(text).to.not.include(marker)
        const erasures = await (await fetch(`${server.url}/v1/events?agent_id=audit-trail:erasures`)).json()
        expect(erasures[0].action_name).to.equal('payload.retention')
      } finally {
        await server.stop()
      }
    } finally {
      await removeDir(dir)
    }
  })
})
