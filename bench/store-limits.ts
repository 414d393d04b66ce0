/**
 * `npm run bench:store -- [--events 1000000] [--before PATH]`: what the embedded store costs over
 * one large ingest (bench/store-measure.ts). With --before, the same run against another checkout
 * (built: `npm ci && npm run build` there, e.g. of the commit before a change), printed beside this
 * one.
 */
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {measureStore, storeRows} from './store-measure.js'

const argv = process.argv.slice(2)
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
const EVENTS = Number(option('--events') ?? 1_000_000)
const BEFORE = option('--before')
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const now = await measureStore(root, EVENTS)
const before = BEFORE === undefined ? undefined : await measureStore(path.resolve(BEFORE), EVENTS)
console.log(`\n| what | this checkout |${before ? ' before |' : ''}\n|---|---|${before ? '---|' : ''}`)
for (const [what, value] of storeRows(EVENTS)) {
  console.log(`| ${what} | ${value(now)} |${before ? ` ${value(before)} |` : ''}`)
}
