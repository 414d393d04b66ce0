/**
 * Starts a worker thread on a sibling module, from compiled JavaScript or under tsx.
 *
 * Compiled (dist/*.js) the worker is the sibling .js module. Under tsx (the caller is a .ts file),
 * Node 20 neither runs `--import tsx` in workers nor does tsx register itself there, so a small
 * eval entry registers tsx's ESM hooks in the worker before importing the .ts module.
 */
import {createRequire} from 'node:module'
import {Worker} from 'node:worker_threads'

/**
 * A worker running `name` (without extension) next to the module `callerUrl` (its import.meta.url).
 */
export function startModuleWorker(callerUrl: string, name: string, workerData?: unknown): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), {workerData})
  // createRequire, not import.meta.resolve: tsx may have loaded the caller as CommonJS (mocha).
  const tsxApi = JSON.stringify(createRequire(callerUrl).resolve('tsx/esm/api'))
  const entry = JSON.stringify(new URL(`./${name}.ts`, callerUrl).href)
  return new Worker(`require(${tsxApi}).register(); import(${entry})`, {eval: true, workerData})
}
