/**
 * The CLI at the embedded store's capacity: ingest says the store is full and how to move on;
 * stats shows how full the store is.
 */
import {expect} from 'chai'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'

describe('audit-trail at the store capacity', function () {
  this.timeout(120_000)

  it('ingest refuses past the capacity with the storage_full sentence; stats reports the state', async () => {
    const dir = await tempDir()
    try {
      const dataDir = path.join(dir, 'data')
      const file = path.join(dir, 'events.ndjson')
      const line = (i: number) =>
        JSON.stringify({
          agent_id: 'cli-bot',
          action_type: 'TOOL_CALL',
          action_name: `step-${i}`,
          input: {text: 'q'.repeat(2000)},
        })
      await writeFile(file, Array.from({length: 20}, (_, i) => line(i)).join('\n'))
      const env = {AUDIT_TRAIL_STORE_CAPACITY: '512KiB'}
      // Files of 20 events (one batch each) until one no longer fits.
      let ingest = await runCli(['ingest', file, '--data-dir', dataDir], {env})
      let files = 0
      for (; ingest.code === 0 && files < 30; files++)
        ingest = await runCli(['ingest', file, '--data-dir', dataDir], {env})
      expect(files).to.be.greaterThan(3)
      // Could not record: exit 3 (README.md, "Exit codes").
      expect(ingest.code).to.equal(3)
      expect(ingest.stderr).to.match(
        new RegExp(
          String.raw`nothing was recorded: the embedded store holds .* of its 0\.5 MiB capacity; ` +
            'move the data directory to a PostgreSQL server with ' +
            String.raw`${'`'}audit-trail migrate --data-dir DIR --database-url postgres://\.\.\.${'`'}`,
        ),
      )
      // The error, after the store's warning that it is nearly full.
      const lines = ingest.stderr.trim().split('\n')
      expect(lines).to.have.length(2)
      expect(lines[0]).to.match(/^audit-trail: warning: the embedded store holds .* % of its 0\.5 MiB capacity/)
      expect(lines[1]).to.match(/^Error: nothing was recorded/)
      const stats = await runCli(['stats', '--data-dir', dataDir], {env})
      expect(stats.code).to.equal(0)
      expect(stats.stdout).to.match(
        new RegExp(
          String.raw`^storage {10}[\d.]+ MiB of 0\.5 MiB \([\d.]+ %\): (full, events are refused|nearly full); ` +
            'move to PostgreSQL with audit-trail migrate$',
          'm',
        ),
      )
      const json = await runCli(['stats', '--data-dir', dataDir, '--json'], {env})
      expect(JSON.parse(json.stdout).storage).to.include({backend: 'embedded', capacity_bytes: 512 * 1024})
    } finally {
      await removeDir(dir)
    }
  })
})
