/**
 * `node bench/compiled.mjs startup|root DIR`: measurements that run the compiled code (dist/, what
 * `audit-trail` runs) in a fresh process, printed as JSON. Started by bench/run.ts after
 * `npm run build`.
 *   startup DIR: time to open the data directory (load the snapshot, replay the journal, rebuild
 *     the Merkle tree), and this process's RSS afterwards.
 *   root DIR: the Merkle root from scratch of every stored event hash, on all cores, timed from the
 *     leaves in memory (best of 3), beside the one-thread computeRoot.
 */
import {openAudit} from '../dist/services/audit.js'
import {computeRoot, leafDataFromHex} from '../dist/core/merkle/index.js'
import {computeRootParallel} from '../dist/threads/merkle-build.js'

const [mode, dataDir] = process.argv.slice(2)
if (mode === 'startup') {
  const t0 = performance.now()
  const services = await openAudit({dataDir})
  const ms = performance.now() - t0
  const rss = process.memoryUsage().rss
  const size = await services.tree.size()
  await services.close()
  process.stdout.write(`${JSON.stringify({ms, rss, size})}\n`)
} else if (mode === 'root') {
  const services = await openAudit({dataDir})
  const expected = Buffer.from(await services.tree.read((tree, size) => tree.rootAt(size))).toString('hex')
  const leafData = leafDataFromHex(await services.store.eventHashes())
  await services.close()
  const runs = []
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now()
    const root = Buffer.from(await computeRootParallel(leafData)).toString('hex')
    runs.push(performance.now() - t0)
    if (root !== expected) throw new Error('parallel root differs from the tree')
  }
  const leaves = Array.from({length: leafData.length / 32}, (_, i) => leafData.subarray(i * 32, (i + 1) * 32))
  const t0 = performance.now()
  const single = Buffer.from(computeRoot(leaves)).toString('hex')
  const singleMs = performance.now() - t0
  if (single !== expected) throw new Error('computeRoot differs from the tree')
  process.stdout.write(`${JSON.stringify({ms: Math.min(...runs), runs, singleMs})}\n`)
} else {
  throw new Error('usage: compiled.mjs startup|root DIR')
}
