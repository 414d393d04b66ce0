/**
 * Soak (issue 10): SOAK_MINUTES (default 10) of mixed traffic against the real server on
 * 127.0.0.1: ingest (single and batch), queries, search, stream subscribers, timestamps and
 * exports. The server's RSS and request latency are sampled; memory must level off rather than
 * grow with the number of events. Run with `npm run test:reliability`.
 */
import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import WebSocket from 'ws'
import {startServe} from '../support/cli.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10)

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(match?.[1] ?? 0) / 1024
}

describe('soak', function () {
  this.timeout((MINUTES + 2) * 60_000)

  it(`serves ${MINUTES} minutes of mixed traffic with bounded memory`, async () => {
    const dir = await tempDir()
    const server = await startServe(['--data-dir', path.join(dir, 'data')])
    const pid = server.child.pid!
    const deadline = Date.now() + MINUTES * 60_000
    const latencies: number[] = []
    const samples: Array<{t: number; rss: number; events: number}> = []
    let events = 0
    let errors = 0
    const timed = async (work: () => Promise<Response>) => {
      const t0 = performance.now()
      const res = await work()
      await res.arrayBuffer()
      latencies.push(performance.now() - t0)
      if (res.status >= 500) errors++
      return res
    }
    const post = (p: string, body: unknown) =>
      timed(() =>
        fetch(`${server.url}${p}`, {
          method: 'POST',
          headers: {'content-type': 'application/json'},
          body: JSON.stringify(body),
        }),
      )
    const get = (p: string) => timed(() => fetch(`${server.url}${p}`))
    const subscribers = Array.from({length: 20}, (_, i) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/stream${i % 2 ? '?agent_id=soak-1' : ''}`)
      ws.on('error', () => {})
      return ws
    })
    const writers = Array.from({length: 4}, async (_, n) => {
      while (Date.now() < deadline) {
        if (n === 0) {
          await post(
            '/v1/batch',
            Array.from({length: 200}, (_, i) => makeEvent({agent_id: `soak-${i % 5}`, input: {n: i}})),
          )
          events += 200
        } else {
          await post('/v1/events', makeEvent({agent_id: `soak-${n}`}))
          events++
        }
      }
    })
    const readers = (async () => {
      for (let i = 0; Date.now() < deadline; i++) {
        await get(`/v1/events?agent_id=soak-${i % 5}&limit=100`)
        await get('/v1/search?q=read_file')
        await get('/v1/stats')
        if (i % 50 === 0) await post('/v1/timestamp', undefined as never)
        if (i % 100 === 0) await get('/v1/export?agent_id=soak-3&since=2099-01-01T00:00:00Z')
      }
    })()
    const sampler = (async () => {
      while (Date.now() < deadline) {
        samples.push({t: Date.now(), rss: rssMb(pid), events})
        await new Promise((r) => setTimeout(r, 5_000))
      }
    })()
    await Promise.all([...writers, readers, sampler])
    for (const ws of subscribers) ws.close()
    const stop = await server.stop()
    await removeDir(dir)

    latencies.sort((a, b) => a - b)
    const p = (q: number) => latencies[Math.floor(q * (latencies.length - 1))]!.toFixed(1)
    const third = Math.floor(samples.length / 3)
    const early = Math.max(...samples.slice(0, third).map((s) => s.rss))
    const late = Math.max(...samples.slice(-third).map((s) => s.rss))
    console.log(
      `      ${events} events, ${latencies.length} requests, p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, RSS ` +
        `${samples[0]!.rss.toFixed(0)} -> ${early.toFixed(0)} -> ${late.toFixed(0)} MB`,
    )
    expect(errors).to.equal(0)
    expect(stop).to.equal(0)
    // sql.js holds the data in memory, so RSS grows with the store (~1 KB per event); beyond
    // that it must not grow: bound the late peak by the early peak plus the data added since.
    const added = (samples.at(-1)!.events - samples[third]!.events) / 1024
    expect(late).to.be.below(early * 1.2 + added * 2 + 64)
  })
})
