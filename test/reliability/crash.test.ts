/**
 * Crash safety (issue 10): SIGKILL the real server at random moments during concurrent single and
 * batch ingest; after every restart each acknowledged event is present, chains verify, the tree
 * size equals the stored count, and nothing is duplicated. All traffic is on 127.0.0.1.
 */
import {expect} from 'chai'
import path from 'node:path'
import {startServe} from '../support/cli.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

// The main pass kills 6 times; `npm run test:reliability` 20 (docs/testing.md, Large data).
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 6)

async function ingestUntilStopped(url: string, acked: Set<string>, stop: {now: boolean}): Promise<void> {
  const worker = async (n: number) => {
    for (let i = 0; !stop.now; i++) {
      try {
        if ((n + i) % 3 === 0) {
          const res = await fetch(`${url}/v1/batch`, {
            method: 'POST',
            headers: {'content-type': 'application/json'},
            body: JSON.stringify(Array.from({length: 25}, () => makeEvent({agent_id: `crash-${n % 4}`}))),
          })
          if (res.status === 201)
            for (const r of (await res.json()) as Array<{event: {id: string}}>) acked.add(r.event.id)
        } else {
          const res = await fetch(`${url}/v1/events`, {
            method: 'POST',
            headers: {'content-type': 'application/json'},
            body: JSON.stringify(makeEvent({agent_id: `crash-${n % 4}`})),
          })
          if (res.status === 201) acked.add(((await res.json()) as {id: string}).id)
        }
      } catch {
        return // the server died mid-request: that answer was never acknowledged
      }
    }
  }
  await Promise.all(Array.from({length: 8}, (_, n) => worker(n)))
}

describe('crash safety under SIGKILL', function () {
  this.timeout(ROUNDS * 30_000)

  it(`keeps every acknowledged event through ${ROUNDS} kills`, async () => {
    const dir = await tempDir()
    const dataDir = path.join(dir, 'data')
    const acked = new Set<string>()
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const server = await startServe(['--data-dir', dataDir])
        const stop = {now: false}
        const load = ingestUntilStopped(server.url, acked, stop)
        await new Promise((r) => setTimeout(r, 200 + Math.random() * 1200))
        server.child.kill('SIGKILL')
        stop.now = true
        await load
        await server.exited
      }
      const server = await startServe(['--data-dir', dataDir])
      try {
        const ids: string[] = []
        for (let offset = 0; ; offset += 1000) {
          const page = (await (await fetch(`${server.url}/v1/events?limit=1000&offset=${offset}`)).json()) as Array<{
            id: string
            index: number
          }>
          page.forEach((e, i) => expect(e.index).to.equal(offset + i))
          ids.push(...page.map((e) => e.id))
          if (page.length < 1000) break
        }
        expect(new Set(ids).size, 'no duplicates').to.equal(ids.length)
        const stored = new Set(ids)
        const lost = [...acked].filter((id) => !stored.has(id))
        expect(lost, 'acknowledged events lost').to.deep.equal([])
        const root = (await (await fetch(`${server.url}/v1/merkle/root`)).json()) as {tree_size: number}
        expect(root.tree_size).to.equal(ids.length)
        const verify = (await (await fetch(`${server.url}/v1/verify`)).json()) as {valid: boolean}
        expect(verify.valid).to.equal(true)
        expect(acked.size).to.be.greaterThan(ROUNDS)
      } finally {
        await server.stop()
      }
    } finally {
      await removeDir(dir)
    }
  })
})
