import {rm} from 'node:fs/promises'
import {spawnSync} from 'node:child_process'
import {createWriteStream} from 'node:fs'
import {once} from 'node:events'
import path from 'node:path'
import {syntheticEvent} from '../events.js'
import {CEILING_SAMPLE, root, fmt, record} from '../common.js'

/** `audit-trail ingest FILE` of NDJSON on a fresh data directory, the real CLI (bin/run.js, built). */
export async function cliIngestPhase(dir: string): Promise<void> {
  const file = path.join(dir, 'cli-events.ndjson')
  const out = createWriteStream(file)
  for (let i = 0; i < CEILING_SAMPLE; i++)
    if (!out.write(`${JSON.stringify(syntheticEvent(i))}\n`)) await once(out, 'drain')
  out.end()
  await once(out, 'finish')
  const t0 = performance.now()
  const run = spawnSync(
    process.execPath,
    [path.join(root, 'bin', 'run.js'), 'ingest', file, '--data-dir', path.join(dir, 'cli-data'), '--json'],
    {encoding: 'utf8'},
  )
  const ms = performance.now() - t0
  if (run.status !== 0) throw new Error(`CLI ingest failed: ${run.stderr}`)
  record({
    what: `CLI: audit-trail ingest of ${fmt(CEILING_SAMPLE)} NDJSON events (process start included)`,
    value: `${fmt(CEILING_SAMPLE / (ms / 1000))} /s`,
    target: '-',
  })
  await rm(path.join(dir, 'cli-data'), {recursive: true, force: true})
  await rm(file)
}
