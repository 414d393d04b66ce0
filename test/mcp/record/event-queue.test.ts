import {readdir, readFile, writeFile} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {expect} from 'chai'
import {EventQueue} from '../../../src/mcp/record/event-queue.js'
import {useTempDir} from '../../support/hooks.js'
import {deadPid} from '../../support/mcp.js'

describe('EventQueue (the bounded queue on disk)', () => {
  const dir = useTempDir()

  it('gives events back in order, each once, and starts its file over when all are acknowledged', async () => {
    const queue = await EventQueue.open(dir)
    for (let i = 0; i < 5; i++) queue.append({n: i})
    await queue.flushed()
    const first = await queue.take(3, 1 << 20)
    expect(first?.bodies).to.deep.equal([{n: 0}, {n: 1}, {n: 2}])
    await queue.ack(first!)
    const second = await queue.take(10, 1 << 20)
    expect(second?.bodies).to.deep.equal([{n: 3}, {n: 4}])
    await queue.ack(second!)
    expect(await queue.take(10, 1 << 20)).to.equal(undefined)
    expect(queue.backlogEvents).to.equal(0)
    const segment = (await readdir(dir)).find((name) => name.endsWith('.ndjson'))!
    expect(await readFile(path.join(dir, segment), 'utf8')).to.equal('')
    expect(await queue.close()).to.equal(0)
  })

  it('syncs an event to disk before offering it', async () => {
    const queue = await EventQueue.open(dir)
    queue.append({n: 'x'})
    await queue.ready()
    const segment = (await readdir(dir)).find((name) => name.endsWith('.ndjson'))!
    expect(await readFile(path.join(dir, segment), 'utf8')).to.equal('{"n":"x"}\n')
    await queue.close()
  })

  it('refuses room past its bound, and has room again once the log took the events', async () => {
    const queue = await EventQueue.open(dir, {limit: 100})
    expect(queue.hasRoom()).to.equal(true)
    queue.append({text: 'y'.repeat(120)})
    expect(queue.hasRoom()).to.equal(false)
    expect(queue.fullReason).to.match(/is full \(100 bytes\)/)
    await queue.flushed()
    await queue.ack((await queue.take(10, 1 << 20))!)
    expect(queue.hasRoom()).to.equal(true)
    await queue.close()
  })

  it('sends what a dead proxy left after what it had sent, before its own events; drops a torn line', async () => {
    const pid = deadPid()
    const host = encodeURIComponent(os.hostname())
    const orphan = path.join(dir, `${host}~${pid}~1700000000000-abc.ndjson`)
    await writeFile(orphan, '{"n":"sent"}\n{"n":"left-1"}\n{"n":"left-2"}\n{"n":"to')
    await writeFile(`${orphan}.acked`, String('{"n":"sent"}\n'.length))
    const otherHost = path.join(dir, `elsewhere~${pid}~1700000000000-abc.ndjson`)
    await writeFile(otherHost, '{"n":"not ours"}\n')
    const queue = await EventQueue.open(dir)
    expect(queue.backlogEvents).to.equal(2)
    queue.append({n: 'own'})
    await queue.flushed()
    const seen: unknown[] = []
    for (let batch = await queue.take(10, 1 << 20); batch; batch = await queue.take(10, 1 << 20)) {
      seen.push(...batch.bodies)
      await queue.ack(batch)
    }
    expect(seen).to.deep.equal([{n: 'left-1'}, {n: 'left-2'}, {n: 'own'}])
    expect(await readdir(dir)).to.not.include(path.basename(orphan))
    expect(await readdir(dir)).to.include(path.basename(otherHost))
    await queue.close()
  })

  it('keeps unsent events on disk for the next run', async () => {
    const queue = await EventQueue.open(dir)
    queue.append({n: 1})
    queue.append({n: 2})
    expect(await queue.close()).to.equal(2)
    const lines = await Promise.all(
      (await readdir(dir)).filter((n) => n.endsWith('.ndjson')).map((n) => readFile(path.join(dir, n), 'utf8')),
    )
    expect(lines.join('')).to.equal('{"n":1}\n{"n":2}\n')
  })
})
