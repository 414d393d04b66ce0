// The client side of bench/run.ts's OTLP transport rows, on a thread of its own (as an SDK or a
// Collector on another machine would be): sends prepared bodies, `inFlight` at a time, and posts
// the rate. Loads the compiled dist/ for the gRPC service definition the server uses.
import {parentPort, workerData} from 'node:worker_threads'
import {Metadata, credentials, makeGenericClientConstructor} from '@grpc/grpc-js'

const {kind, target, type, bodies, inFlight, eventsPerBody} = workerData
const {TRACE_SERVICE} = await import(new URL('../dist/server/grpc.js', import.meta.url).href)

let send
let close = () => {}
if (kind === 'grpc') {
  const Client = makeGenericClientConstructor(TRACE_SERVICE, 'TraceService')
  const client = new Client(target, credentials.createInsecure())
  send = (body) =>
    new Promise((resolve, reject) =>
      client.Export(body, new Metadata(), (error) => (error ? reject(error) : resolve())),
    )
  close = () => client.close()
} else {
  send = async (body) => {
    const response = await fetch(target, {method: 'POST', headers: {'content-type': type}, body})
    await response.arrayBuffer()
    if (response.status !== 200 && response.status !== 201) throw new Error(`${target} answered ${response.status}`)
  }
}
const buffers = bodies.map((body) => Buffer.from(body))
// One untimed request first, so that the JIT has warmed the path; the measured rounds follow.
await send(buffers[0])
let next = 1
const started = performance.now()
await Promise.all(
  Array.from({length: inFlight}, async () => {
    for (let round = next++; round < buffers.length; round = next++) await send(buffers[round])
  }),
)
const seconds = (performance.now() - started) / 1000
close()
parentPort.postMessage(((buffers.length - 1) * eventsPerBody) / seconds)
