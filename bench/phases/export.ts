import {rm, stat} from 'node:fs/promises'
import {spawnSync} from 'node:child_process'
import {createWriteStream} from 'node:fs'
import {once} from 'node:events'
import path from 'node:path'
import type {AuditServices} from '../../src/services/audit.js'
import {root, fmt, seconds, rss, record, timedAsync} from '../common.js'

export async function exportPhase(services: AuditServices, dir: string): Promise<void> {
  const file = path.join(dir, 'bench.atrail.json')
  const before = rss()
  const out = createWriteStream(file)
  // Label shard 0: exactly 100,000 events of the bulk ingest (all of them in the 100k run).
  const [written, exportMs] = await timedAsync(() => services.exporter.writePackage({labels: {shard: '0'}}, out))
  out.end()
  await once(out, 'finish')
  const size = (await stat(file)).size
  record({
    what:
      `export of ${fmt(written.events)} events with inclusion proofs (${fmt(size / 1e6, 1)} MB) of a tree of ` +
      `${fmt(written.tree_size)}`,
    value: seconds(exportMs),
    target: '< 5 s (100k)',
    ceiling: `RSS +${fmt((rss() - before) / 1e6)} MB`,
  })
  // Offline verification as `verify --package` does it (streamed parse, then every check), in a
  // process of its own so that its peak memory is its own.
  const alone = verifyOffline(file, ['--one-thread'])
  const result = verifyOffline(file, [])
  const grew = result.peakRss - result.baseRss
  record({
    what: 'offline verification of that package (parse + every check, own process, hashing threads)',
    value: seconds(result.ms),
    target: '< 5 s, memory <= 2x package',
    ceiling:
      `${fmt(alone.ms / result.ms, 2)}x the same on one thread (${seconds(alone.ms)}); ` +
      `peak RSS +${fmt(grew / 1e6)} MB = ${fmt(grew / size, 2)}x the package`,
  })
  const t0 = performance.now()
  const cli = spawnSync(process.execPath, [path.join(root, 'bin', 'run.js'), 'verify', '--package', file, '--json'], {
    encoding: 'utf8',
  })
  if (cli.status !== 0) throw new Error(`verify --package failed: ${cli.stderr}`)
  record({
    what: '`audit-trail verify --package` of that package (process start included)',
    value: seconds(performance.now() - t0),
    target: '-',
  })
  await rm(file)
}

/** bench/verify-package.ts on `file` in a process of its own; its time and memory. */
function verifyOffline(file: string, args: string[]): {ms: number; baseRss: number; peakRss: number} {
  const script = path.join(root, 'bench', 'verify-package.ts')
  const child = spawnSync(process.execPath, ['--import', 'tsx', script, file, ...args], {encoding: 'utf8'})
  if (child.status !== 0) throw new Error(`offline verification failed: ${child.stderr}`)
  const result = JSON.parse(child.stdout) as {valid: boolean; ms: number; baseRss: number; peakRss: number}
  if (!result.valid) throw new Error('package does not verify')
  return result
}
