/**
 * `node --expose-gc --import tsx bench/compare.ts --before PATH [--store postgres] [--events N] [--runs R]`:
 * this checkout beside another (PATH, with its node_modules) on the same work, each run in a fresh
 * process, the two checkouts taking turns, R runs each (3); prints each run and the medians. What a
 * refactoring that must not change speed is measured with (issue 29).
 */
import {execFileSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const argv = process.argv.slice(2)
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
const before = option('--before')
if (before === undefined) throw new Error('--before PATH: the checkout to compare with')
const store = option('--store') === 'postgres' ? 'postgres' : 'sqljs'
const events = Number(option('--events') ?? 100_000)
const runs = Number(option('--runs') ?? 3)
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const checkouts = {before: path.resolve(before), now: here}

type Run = Record<string, number>
const results: Record<keyof typeof checkouts, Run[]> = {before: [], now: []}
for (let r = 0; r < runs; r++) {
  for (const name of ['before', 'now'] as const) {
    const script = path.join(here, 'bench', 'compare-run.ts')
    const args = ['--expose-gc', '--import', 'tsx', script, checkouts[name], store, String(events)]
    const out = execFileSync(process.execPath, args, {cwd: checkouts[name], encoding: 'utf8'})
    const run = JSON.parse(out.trim().split('\n').at(-1)!) as Run
    results[name].push(run)
    console.log(`run ${r + 1} ${name.padEnd(6)} ${JSON.stringify(run)}`)
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
console.log(`\n${store}, ${events} events, medians of ${runs}:`)
for (const key of Object.keys(results.now[0]!)) {
  const [b, n] = [median(results.before.map((run) => run[key]!)), median(results.now.map((run) => run[key]!))]
  const cell = (value: number) => value.toFixed(2).padStart(10)
  console.log(`${key.padEnd(12)} before ${cell(b)}  now ${cell(n)}  now/before ${(n / b).toFixed(2)}`)
}
