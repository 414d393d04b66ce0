// `npm test`'s pretest: runs the npm scripts it is given at once (lint, typecheck and build are
// independent and each mostly one core), prints each one's output whole when it ends, and fails if
// any failed. Run: node scripts/run-parallel.mjs lint typecheck build
import {spawn} from 'node:child_process'

const names = process.argv.slice(2)
const runs = names.map(
  (name) =>
    new Promise((resolve) => {
      const child = spawn('npm', ['run', name], {stdio: ['ignore', 'pipe', 'pipe']})
      const output = []
      child.stdout.on('data', (chunk) => output.push(chunk))
      child.stderr.on('data', (chunk) => output.push(chunk))
      child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)))
      child.on('close', (code) => {
        process.stdout.write(Buffer.concat(output))
        resolve(code === 0 ? undefined : `npm run ${name} exited with ${code}`)
      })
    }),
)
const failures = (await Promise.all(runs)).filter((failure) => failure !== undefined)
for (const failure of failures) console.error(failure)
process.exit(failures.length === 0 ? 0 : 1)
