/**
 * `node --import tsx bench/verify-package.ts FILE`: offline verification of an evidence package
 * exactly as `audit-trail verify --package` does it, printing its time and this process's memory
 * as JSON (run by bench/run.ts in a process of its own, so that the peak is the verification's).
 */
import {readPackageFile} from '../src/cli/package-file.js'
import {verifyPackage} from '../src/core/evidence/verify.js'

const file = process.argv[2]
if (!file) throw new Error('usage: verify-package.ts FILE')
const baseRss = process.memoryUsage().rss
const t0 = performance.now()
const result = await verifyPackage(await readPackageFile(file))
const ms = performance.now() - t0
const peakRss = process.resourceUsage().maxRSS * 1024
process.stdout.write(`${JSON.stringify({valid: result.valid, failure: result.failure, ms, baseRss, peakRss})}\n`)
