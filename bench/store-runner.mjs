// The server half of bench/store-limits.ts: serves the built app of one checkout (its dist/) on
// 127.0.0.1 as `serve` does, and answers the parent's questions over IPC: how long opening took,
// the longest event-loop stall (perf_hooks.monitorEventLoopDelay) and the peak RSS (VmHWM).
import {readFileSync} from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import {monitorEventLoopDelay} from 'node:perf_hooks'
import {pathToFileURL} from 'node:url'

const [checkout, dataDir] = process.argv.slice(2)
const load = (file) => import(pathToFileURL(path.join(checkout, 'dist', file)).href)
const {openAudit} = await load('services/audit.js')
const {createApp} = await load('server/app.js')

const t0 = performance.now()
const services = await openAudit({dataDir})
const openMs = performance.now() - t0
const server = http.createServer(createApp(services, {logError: () => undefined}).callback())
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const delay = monitorEventLoopDelay({resolution: 10})
delay.enable()

const peakRssBytes = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024

process.on('message', async (message) => {
  if (message === 'report') {
    process.send({maxStallMs: delay.max / 1e6, peakRssBytes: peakRssBytes()})
  } else if (message === 'stop') {
    delay.disable()
    await new Promise((resolve) => server.close(resolve))
    await services.close()
    process.send({stopped: true, peakRssBytes: peakRssBytes()})
    process.disconnect()
  }
})
process.send({port: server.address().port, openMs})
