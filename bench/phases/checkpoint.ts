import {once} from 'node:events'
import http from 'node:http'
import path from 'node:path'
import Koa from 'koa'
import {createApp} from '../../src/server/app.js'
import type {AuditServices} from '../../src/services/audit.js'
import {formatTileIndex} from '../../src/core/tiles/index.js'
import {listen} from '../../src/server/server.js'
import {createWitnessApp} from '../../src/server/witness-app.js'
import {Witness} from '../../src/services/witness.js'
import {WitnessClient} from '../../src/services/witness-client.js'
import {binaryLoad} from '../binary-load.js'
import {syntheticEvent} from '../events.js'
import {EVENTS, HTTP, fmt, record, timedAsync} from '../common.js'

/**
 * C2SP checkpoints (issue 22): a checkpoint signed (after its consistency check against stored
 * content) and cosigned by a witness on loopback, and a full tile served beside GET /v1/merkle/root.
 */
export async function checkpointPhase(services: AuditServices, dir: string): Promise<void> {
  const identity = await services.checkpoints.identity()
  const witness = await Witness.open({
    dir: path.join(dir, 'witness'),
    name: 'bench.invalid/witness',
    logs: new Map([[identity.origin, [identity.verifierKey]]]),
  })
  const witnessServer = await listen(createWitnessApp(witness), '127.0.0.1', 0)
  const client = new WitnessClient({
    store: services.store,
    tree: services.tree,
    witness: {url: witnessServer.url, verifierKey: witness.verifierKey},
  })
  // The time from signing to the stored cosignature; the event that grows the tree comes before it.
  const signAndCosign = async (i: number) => {
    await services.ingest.recordBatch([syntheticEvent(EVENTS + 10 + i, 'checkpoint')])
    const [, ms] = await timedAsync(async () => {
      const record = await services.checkpoints.signIfGrown()
      if (!record) throw new Error('no checkpoint signed')
      client.submit(record)
      await client.idle()
    })
    if ((await services.store.latestCheckpoint())!.cosignatures.length !== 1)
      throw new Error('the witness did not cosign')
    return ms
  }
  // The first two bring the recomputed-content tree up to date (a one-off after start-up).
  const warmMs = (await signAndCosign(0)) + (await signAndCosign(1))
  let ms = 0
  for (let i = 2; i < 22; i++) ms += await signAndCosign(i)
  record({
    what: `checkpoint signed + cosigned by a loopback witness at ${fmt(EVENTS)} events (mean of 20, one event each)`,
    value: `${fmt(ms / 20, 2)} ms`,
    target: '< 10 ms',
    ceiling: `first two after start-up: ${fmt(warmMs)} ms`,
  })
  client.close()
  await witnessServer.close()
  if (!HTTP) return
  const server = http.createServer(createApp(services, {logError: () => {}}).callback())
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
  // Both with a client that does not decode bodies (bench/binary-load.ts): a tile is random bytes.
  const tilePath = `/tlog/tile/0/${formatTileIndex(Math.floor(EVENTS / 512))}`
  const rootLatency = await binaryLoad(`${url}/v1/merkle/root`)
  const tileLatency = await binaryLoad(`${url}${tilePath}`)
  // Ceiling: a bare Koa endpoint answering the same two bodies from memory; their ratio is what the
  // body sizes (8 KiB against about 130 bytes) alone allow the tile.
  const tileBytes = Buffer.from(await (await fetch(`${url}${tilePath}`)).arrayBuffer())
  const rootBody = await (await fetch(`${url}/v1/merkle/root`)).json()
  const bare = new Koa()
  bare.use((ctx) => {
    if (ctx.path === '/tile') {
      ctx.type = 'application/octet-stream'
      ctx.body = tileBytes
    } else ctx.body = rootBody
  })
  const bareServer = await listen(bare, '127.0.0.1', 0)
  const bareTile = await binaryLoad(`${bareServer.url}/tile`)
  const bareRoot = await binaryLoad(`${bareServer.url}/root`)
  await bareServer.close()
  record({
    what: `GET /tlog/tile/0/<N> (a full 8 KiB tile) at ${fmt(EVENTS)} events, 50 conns (undici client)`,
    value: `p50 ${tileLatency.p50} ms, p99 ${tileLatency.p99} ms`,
    target: '>= GET /v1/merkle/root',
    ceiling:
      `${fmt(tileLatency.rps)} req/s = ${fmt(tileLatency.rps / rootLatency.rps, 2)} of GET /v1/merkle/root ` +
      `(${fmt(rootLatency.rps)} req/s); bare Koa, the same bodies: tile ${fmt(bareTile.rps)}, ` +
      `root ${fmt(bareRoot.rps)} req/s = ${fmt(bareTile.rps / bareRoot.rps, 2)}`,
  })
  server.closeAllConnections()
  server.close()
}
