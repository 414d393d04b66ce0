// The worker of bench/binary-load.ts: undici's Pool, each body consumed without decoding.
import {parentPort, workerData} from 'node:worker_threads'
import {Pool} from 'undici'

const {url, connections, seconds, paths} = workerData
const target = new URL(url)
const pool = new Pool(target.origin, {connections, pipelining: 1})
const only = `${target.pathname}${target.search}`
let turn = 0
const nextPath = () => (paths ? paths[turn++ % paths.length] : only)
const latencies = []
const until = performance.now() + seconds * 1000
await Promise.all(
  Array.from({length: connections}, async () => {
    while (performance.now() < until) {
      const started = performance.now()
      const path = nextPath()
      const {statusCode, body} = await pool.request({path, method: 'GET'})
      for await (const chunk of body) void chunk
      if (statusCode !== 200) throw new Error(`${path} answered ${statusCode}`)
      latencies.push(performance.now() - started)
    }
  }),
)
await pool.close()
latencies.sort((a, b) => a - b)
const at = (q) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))])
parentPort.postMessage({rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99)})
