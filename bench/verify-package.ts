/**
 * `node --import tsx bench/verify-package.ts FILE [--one-thread]`: offline verification of an
 * evidence package exactly as `audit-trail verify --package` does it (with its hashing threads, or
 * all on one thread), printing its time and this process's memory as JSON (run by bench/run.ts in
 * a process of its own, so that the peak is the verification's).
 */
import {readFileSync} from 'node:fs'
import {readPackageFile} from '../src/cli/package-file.js'
import {verifyPackage} from '../src/core/evidence/verify.js'
import {PackageHashing} from '../src/threads/package-hashes.js'

const file = process.argv[2]
if (!file) throw new Error('usage: verify-package.ts FILE [--one-thread]')
const hashes = process.argv.includes('--one-thread') ? undefined : new PackageHashing()
const baseRss = process.memoryUsage().rss
const t0 = performance.now()
const result = await verifyPackage(await readPackageFile(file, hashes), {hashes})
const ms = performance.now() - t0
await hashes?.stop()
// VmHWM, the peak of this process's own memory: getrusage's maxRSS would also count the parent's
// memory at the moment it forked this process (Linux keeps it across exec).
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
const peakRss = hwm ? Number(hwm[1]) * 1024 : process.resourceUsage().maxRSS * 1024
process.stdout.write(`${JSON.stringify({valid: result.valid, failure: result.failure, ms, baseRss, peakRss})}\n`)
