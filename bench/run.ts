/**
 * `npm run bench [-- --events 1000000] [--no-http] [--store postgres]`: measures the targets of the issues on this
 * machine, each beside a ceiling measured in the same run, and writes docs/benchmarks.md.
 * Traffic goes only to 127.0.0.1; every phase is bounded and the run stops by itself. Each phase is a
 * file of bench/phases/ (a few older ones are files of bench/), sharing the report of bench/common.ts.
 */
import {mkdtemp, rm, stat, writeFile} from 'node:fs/promises'
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {openAudit, type AuditServices} from '../src/services/audit.js'
import {oversightRows} from './phases/oversight.js'
import {measureStore, storeRows} from './store-measure.js'
import {syntheticEvent} from './events.js'
import {receiptPhase} from './receipts.js'
import {signaturesPhase} from './signatures.js'
import {erasureRows, payloadIngestRows} from './erasure.js'
import {ceilings} from './phases/ceilings.js'
import {ingest} from './phases/ingest.js'
import {integrity} from './phases/integrity.js'
import {httpPhase} from './phases/http.js'
import {checkpointPhase} from './phases/checkpoint.js'
import {exportPhase} from './phases/export.js'
import {policyPhase} from './phases/policy.js'
import {streamPhase} from './phases/stream.js'
import {otlpPhase} from './phases/otlp.js'
import {otlpTransportPhase} from './phases/otlp-transport.js'
import {cliIngestPhase} from './phases/cli-ingest.js'
import {mcpPhase} from './phases/mcp.js'
import {
  argv,
  EVENTS,
  HTTP,
  CEILING_SAMPLE,
  root,
  rows,
  fmt,
  seconds,
  rss,
  peakRssMb,
  record,
  timedAsync,
} from './common.js'
import {forwardingPhase} from './phases/forwarding.js'
import {trailsPhase} from './phases/trails.js'

/**
 * `--phases otlp-transport,checkpoint`: after a plain ingest of the events, only these phases, and
 * the rows are printed, not written to docs/benchmarks.md (a partial run is no section of it).
 */
const PHASES = argv.includes('--phases') ? new Set(argv[argv.indexOf('--phases') + 1]!.split(',')) : undefined
// The PostgreSQL store's rows are a run of their own (bench/postgres.ts).
if (argv.includes('--store') && argv[argv.indexOf('--store') + 1] === 'postgres') {
  await import('./postgres.js')
  process.exit(0)
}
/** Only the named phases, after a plain ingest of EVENTS events (see PHASES). */
async function selectedPhases(dir: string, phases: Set<string>): Promise<void> {
  const all: Record<string, (services: AuditServices) => Promise<void>> = {
    // The hash ceilings and the commitment-form row (issue 30, 46) without the rest of a full run.
    ceilings: async () => void (await ceilings()),
    http: httpPhase,
    integrity,
    checkpoint: (services) => checkpointPhase(services, dir),
    receipts: (services) => receiptPhase(services, record),
    export: (services) => exportPhase(services, dir),
    policy: policyPhase,
    otlp: otlpPhase,
    'otlp-transport': otlpTransportPhase,
    stream: streamPhase,
    mcp: mcpPhase,
    oversight: async () => (await oversightRows()).forEach(record),
    signatures: () => signaturesPhase(dir, EVENTS, record),
    'payload-ingest': async () => {
      for (const row of await payloadIngestRows(path.join(dir, 'payload'), CEILING_SAMPLE)) record(row)
    },
    erasure: async (services) => {
      for (const row of await erasureRows(services)) record(row)
    },
    forwarding: () => forwardingPhase(path.join(dir, 'forwarding'), EVENTS, record),
    trails: () => trailsPhase(path.join(dir, 'trails')),
  }
  const unknown = [...phases].filter((name) => !(name in all))
  if (unknown.length > 0) throw new Error(`unknown phase ${unknown.join(', ')}; phases: ${Object.keys(all).join(', ')}`)
  const services = await openAudit({dataDir: dir})
  for (let i = 0; i < EVENTS; i += 1000) {
    await services.ingest.recordBatch(Array.from({length: Math.min(1000, EVENTS - i)}, (_, k) => syntheticEvent(i + k)))
  }
  for (const name of Object.keys(all)) if (phases.has(name)) await all[name]!(services)
  await services.close()
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-bench-'))
try {
  console.log(
    `audit-trail benchmark: ${fmt(EVENTS)} events, ${os.cpus().length} x ${os.cpus()[0]?.model}, node ` +
      `${process.version}\n`,
  )
  if (PHASES) {
    await selectedPhases(dir, PHASES)
    await rm(dir, {recursive: true, force: true})
    process.exit(0)
  }
  const sample = await ceilings()
  for (const row of await payloadIngestRows(path.join(dir, 'payload'), CEILING_SAMPLE)) record(row)
  await cliIngestPhase(dir)
  let services = await openAudit({dataDir: dir})
  await ingest(services, sample)
  await integrity(services)
  // One more event, so that the snapshot has something to write (the last ingest batch may just
  // have triggered a background one).
  await services.ingest.recordBatch([syntheticEvent(EVENTS, 'http')])
  const [, snapshotMs] = await timedAsync(() => services.store.snapshot())
  record({
    what: 'snapshot write (events.sqlite)',
    value: seconds(snapshotMs),
    target: '-',
    ceiling: `${fmt((await stat(path.join(dir, 'events.sqlite'))).size / 1e6)} MB`,
  })
  await services.close()
  // Start-up and the root from scratch run the compiled code in a fresh process, as `serve` does.
  const compiled = (mode: string) => {
    const child = spawnSync(process.execPath, [path.join(root, 'bench', 'compiled.mjs'), mode, dir], {encoding: 'utf8'})
    if (child.status !== 0) throw new Error(`bench/compiled.mjs ${mode} failed: ${child.stderr}`)
    return JSON.parse(child.stdout) as {ms: number; rss: number; singleMs: number}
  }
  const merkleRoot = compiled('root')
  record({
    what: `Merkle root from scratch, ${fmt(EVENTS)} leaves (all cores, best of 3, compiled)`,
    value: seconds(merkleRoot.ms),
    target: '< 1.5 s',
    ceiling: `one thread (computeRoot): ${seconds(merkleRoot.singleMs)}`,
  })
  const startup = compiled('startup')
  record({
    what: 'start-up on the data directory (load, replay, tree ready; fresh process, compiled)',
    value: seconds(startup.ms),
    target: '< 5 s',
    ceiling: `RSS ${fmt(startup.rss / 2 ** 20)} MB after start-up`,
  })
  const [reopened, startMs] = await timedAsync(() => openAudit({dataDir: dir}))
  services = reopened
  record({
    what: 'start-up again, in the benchmark process (TypeScript through tsx)',
    value: seconds(startMs),
    target: '-',
    ceiling: `RSS of the whole process ${fmt(rss() / 2 ** 20)} MB`,
  })
  const [, timestampMs] = await timedAsync(async () => {
    for (let i = 0; i < 20; i++) await services.timestamps.issue()
  })
  record({
    what: 'RFC 3161 timestamps issued by the embedded TSA (20, one after another)',
    value: `${fmt(20 / (timestampMs / 1000), 1)} /s`,
    target: '-',
  })
  if (HTTP) await httpPhase(services)
  await checkpointPhase(services, dir)
  if (HTTP) await receiptPhase(services, record)
  await exportPhase(services, dir)
  await policyPhase(services)
  await otlpPhase(services)
  if (HTTP) await otlpTransportPhase(services)
  if (HTTP) await streamPhase(services)
  if (HTTP) await mcpPhase(services)
  if (HTTP) await trailsPhase(path.join(dir, 'trails'))
  await signaturesPhase(dir, EVENTS, record)
  // Last: it erases the payload of the events the phases above read.
  for (const row of await erasureRows(services)) record(row)
  record({
    what: 'peak RSS of the whole run (service, ceilings, package parse and 1,000 stream clients in one process)',
    value: `${fmt(peakRssMb())} MB`,
    target: '< 1,500 MB (the service)',
  })
  await services.close()
} finally {
  await rm(dir, {recursive: true, force: true})
}

// The embedded store's own costs at this event count (issue 19), each in a fresh server process;
// with --before PATH also those of another built checkout, given beside them.
const beforeCheckout = argv.includes('--before') ? path.resolve(argv[argv.indexOf('--before') + 1]!) : undefined
const storeNow = await measureStore(root, EVENTS)
const storeBefore = beforeCheckout === undefined ? undefined : await measureStore(beforeCheckout, EVENTS)
for (const [what, value] of storeRows(EVENTS)) {
  const ceiling = storeBefore && `before: ${value(storeBefore)}`
  record({what: `embedded store: ${what}`, value: value(storeNow), target: '-', ceiling})
}

const machine =
  `${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, ` +
  `node ${process.version}`
const table = [
  '| measurement | result | target | beside the ceiling |',
  '|---|---|---|---|',
  ...rows.map((r) => `| ${r.what} | ${r.value} | ${r.target} | ${r.ceiling ?? ''} |`),
].join('\n')
const flags = `${HTTP ? '' : ' --no-http'}${beforeCheckout ? ' --before PATH' : ''}`
const command = `npm run bench -- --events ${EVENTS}${flags}`
const header = `## ${fmt(EVENTS)} events\n\nCommand: \`${command}\`  \nMachine: ${machine}  \n`
const section = `${header}Date: ${new Date().toISOString()}\n\n${table}\n`
const docs = path.join(root, 'docs', 'benchmarks.md')
let existing: string
try {
  existing = readFileSync(docs, 'utf8')
} catch {
  existing = '# Benchmarks\n\nWritten by `npm run bench`; each run replaces the section of its event count.\n'
}
const marker = `## ${fmt(EVENTS)} events\n`
const start = existing.indexOf(marker)
const next = start < 0 ? -1 : existing.indexOf('\n## ', start + marker.length)
const updated =
  start < 0
    ? `${existing.trimEnd()}\n\n${section}`
    : `${existing.slice(0, start)}${section}${next < 0 ? '' : existing.slice(next + 1)}`
await writeFile(docs, updated)
console.log(`\nwrote ${path.relative(root, docs)}`)
